#!/usr/bin/python3
"""Keeps ctxsel.v1 compatible with its last release: additions only.

proto/released/ctxsel_v1.proto is ctxsel.v1 as released (the contract old
clients were built against). Both it and today's proto are compiled with
protoc into descriptor sets and compared, the way `buf breaking` compares
(its WIRE_JSON and FILE rules, docs/api.md "Compatibility"): a change is
breaking when it

  * removes or renames a message, enum, service, RPC, field or enum value;
  * changes a field's number, type, message or enum type, label (singular,
    repeated, proto3 optional), oneof, or JSON name;
  * changes an enum value's number, an RPC's request or response type or
    streaming;
  * reuses a field number or name the release reserved;
  * changes the package or the go_package / java_package options.

Run with --self-test to check that each kind of change is caught (the test
of the test, applied to the release's own descriptors).

usage: api_compat_test.py [--self-test] [RELEASED CURRENT]
"""
import copy
import os
import subprocess
import sys
import tempfile

from google.protobuf import descriptor_pb2

FieldDescriptorProto = descriptor_pb2.FieldDescriptorProto


def runfile(path):
    """A data file of this test, or the path itself outside Bazel."""
    root = os.environ.get("TEST_SRCDIR")
    if root:
        candidate = os.path.join(root, os.environ.get("TEST_WORKSPACE", ""),
                                 path)
        if os.path.exists(candidate):
            return candidate
    return path


def compile_proto(path):
    """The FileDescriptorProto of the .proto at `path` (protoc)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "set.pb")
        subprocess.run(
            ["protoc", "-I", os.path.dirname(os.path.abspath(path)),
             "-I", "/usr/include", "--include_source_info",
             "--descriptor_set_out=" + out, os.path.basename(path)],
            check=True)
        fds = descriptor_pb2.FileDescriptorSet()
        with open(out, "rb") as f:
            fds.ParseFromString(f.read())
    return fds.file[-1]


def label_of(field):
    if field.label == FieldDescriptorProto.LABEL_REPEATED:
        return "repeated"
    return "optional" if field.proto3_optional else "singular"


def oneof_of(message, field):
    # proto3 optional fields live in a synthetic oneof: their presence is
    # the label, not a oneof.
    if not field.HasField("oneof_index") or field.proto3_optional:
        return ""
    return message.oneof_decl[field.oneof_index].name


def messages(file):
    """Every message by full name, nested ones included."""
    out = {}

    def walk(prefix, message):
        name = prefix + "." + message.name
        out[name] = message
        for nested in message.nested_type:
            walk(name, nested)
    for message in file.message_type:
        walk(file.package, message)
    return out


def enums(file):
    out = {}
    for enum in file.enum_type:
        out[file.package + "." + enum.name] = enum
    for name, message in messages(file).items():
        for enum in message.enum_type:
            out[name + "." + enum.name] = enum
    return out


def reserved(message):
    numbers = set()
    for r in message.reserved_range:
        numbers.update(range(r.start, r.end))
    return numbers, set(message.reserved_name)


def breaking_changes(old, new):
    """Readable lines, one per breaking change from `old` to `new`."""
    problems = []
    if old.package != new.package:
        # Every name changes with it: one line says all.
        return ["package %s became %s" % (old.package, new.package)]
    for option in ("go_package", "java_package"):
        if getattr(old.options, option) != getattr(new.options, option):
            problems.append("option %s changed" % option)

    new_messages = messages(new)
    for name, message in messages(old).items():
        if name not in new_messages:
            problems.append("message %s removed" % name)
            continue
        now = new_messages[name]
        by_number = {f.number: f for f in now.field}
        for field in message.field:
            where = "%s.%s (= %d)" % (name, field.name, field.number)
            current = by_number.get(field.number)
            if current is None:
                problems.append("field %s removed" % where)
                continue
            if current.name != field.name:
                problems.append("field %s renamed to %s" %
                                (where, current.name))
            if (current.type, current.type_name) != (field.type,
                                                     field.type_name):
                problems.append("field %s changed type" % where)
            if label_of(current) != label_of(field):
                problems.append("field %s changed from %s to %s" %
                                (where, label_of(field), label_of(current)))
            if oneof_of(now, current) != oneof_of(message, field):
                problems.append("field %s changed oneof" % where)
            if current.json_name != field.json_name:
                problems.append("field %s changed JSON name" % where)
        numbers, names = reserved(message)
        for field in now.field:
            if field.number in numbers or field.name in names:
                problems.append("field %s.%s (= %d) reuses a reserved "
                                "number or name" % (name, field.name,
                                                    field.number))
        old_numbers = {f.name: f.number for f in message.field}
        for field in now.field:
            if old_numbers.get(field.name, field.number) != field.number:
                problems.append("field %s.%s changed number" %
                                (name, field.name))

    new_enums = enums(new)
    for name, enum in enums(old).items():
        if name not in new_enums:
            problems.append("enum %s removed" % name)
            continue
        values = {v.name: v.number for v in new_enums[name].value}
        for value in enum.value:
            if value.name not in values:
                problems.append("enum value %s.%s removed" %
                                (name, value.name))
            elif values[value.name] != value.number:
                problems.append("enum value %s.%s changed number" %
                                (name, value.name))

    new_services = {s.name: s for s in new.service}
    for service in old.service:
        if service.name not in new_services:
            problems.append("service %s removed" % service.name)
            continue
        methods = {m.name: m for m in new_services[service.name].method}
        for method in service.method:
            where = "%s.%s" % (service.name, method.name)
            current = methods.get(method.name)
            if current is None:
                problems.append("rpc %s removed" % where)
                continue
            if (current.input_type, current.output_type) != (
                    method.input_type, method.output_type):
                problems.append("rpc %s changed request or response" % where)
            if (current.client_streaming, current.server_streaming) != (
                    method.client_streaming, method.server_streaming):
                problems.append("rpc %s changed streaming" % where)
    return problems


def mutations(release):
    """(kind, mutated copy of `release`) for each kind of breaking change."""
    def first_message(file):
        return next(m for m in file.message_type
                    if any(f.type == FieldDescriptorProto.TYPE_STRING
                           for f in m.field))

    def string_field(file):
        return next(f for f in first_message(file).field
                    if f.type == FieldDescriptorProto.TYPE_STRING)

    def enum_with_values(file):
        return next(e for e in file.enum_type if len(e.value) > 1)

    def with_reserved(file):
        return next(m for m in file.message_type if m.reserved_range)

    def unary_rpc(file):
        return next(m for s in file.service for m in s.method
                    if not m.client_streaming and not m.server_streaming)

    def edit(change):
        mutated = copy.deepcopy(release)
        change(mutated)
        return mutated

    def remove_field(f):
        message = first_message(f)
        del message.field[0]

    def reuse_reserved(f):
        message = with_reserved(f)
        added = message.field.add()
        added.CopyFrom(message.field[0])
        added.name = "reused"
        added.json_name = "reused"
        added.number = message.reserved_range[0].start

    def rename_message(f):
        f.message_type[0].name += "Renamed"

    return [
        ("package", edit(lambda f: setattr(f, "package", "ctxsel.v2"))),
        ("go_package", edit(lambda f: setattr(f.options, "go_package", "x"))),
        ("java_package",
         edit(lambda f: setattr(f.options, "java_package", "x"))),
        ("message removed", edit(lambda f: f.message_type.pop())),
        ("message renamed", edit(rename_message)),
        ("field removed", edit(remove_field)),
        ("field renamed",
         edit(lambda f: setattr(string_field(f), "name", "renamed"))),
        ("field number",
         edit(lambda f: setattr(string_field(f), "number", 999))),
        ("field type",
         edit(lambda f: setattr(string_field(f), "type",
                                FieldDescriptorProto.TYPE_BYTES))),
        ("field label",
         edit(lambda f: setattr(string_field(f), "label",
                                FieldDescriptorProto.LABEL_REPEATED))),
        ("field presence",
         edit(lambda f: setattr(next(
             fld for m in f.message_type for fld in m.field
             if fld.proto3_optional), "proto3_optional", False))),
        ("field json name",
         edit(lambda f: setattr(string_field(f), "json_name", "x"))),
        ("reserved reused", edit(reuse_reserved)),
        ("enum removed", edit(lambda f: f.enum_type.pop())),
        ("enum value removed",
         edit(lambda f: enum_with_values(f).value.pop())),
        ("enum value number",
         edit(lambda f: setattr(enum_with_values(f).value[-1], "number",
                                999))),
        ("service removed", edit(lambda f: f.service.pop())),
        ("rpc removed", edit(lambda f: f.service[0].method.pop())),
        ("rpc request type",
         edit(lambda f: setattr(unary_rpc(f), "input_type",
                                ".google.protobuf.Duration"))),
        ("rpc streaming",
         edit(lambda f: setattr(unary_rpc(f), "server_streaming", True))),
    ]


def main(argv):
    self_test = "--self-test" in argv
    paths = [a for a in argv[1:] if a != "--self-test"]
    released = paths[0] if paths else runfile("proto/released/ctxsel_v1.proto")
    current = paths[1] if len(paths) > 1 else runfile(
        "proto/ctxsel/v1/ctxsel.proto")
    release = compile_proto(released)
    failed = False
    if self_test:
        for kind, mutated in mutations(release):
            found = breaking_changes(release, mutated)
            print("%s: %s" % (kind, "; ".join(found) if found
                              else "NOT CAUGHT"))
            failed |= not found
        additions = copy.deepcopy(release)
        added = additions.message_type[0].field.add()
        added.name, added.json_name, added.number = "added", "added", 999
        added.type = FieldDescriptorProto.TYPE_STRING
        added.label = FieldDescriptorProto.LABEL_OPTIONAL
        if breaking_changes(release, additions):
            print("an added field was called breaking")
            failed = True
    problems = breaking_changes(release, compile_proto(current))
    for problem in problems:
        print("breaking: " + problem)
    if problems or failed:
        print("FAIL: ctxsel.v1 only grows (docs/api.md, Compatibility)")
        return 1
    print("PASS: ctxsel.v1 keeps every name, number and type of its release")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
