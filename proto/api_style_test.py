#!/usr/bin/python3
"""Checks ctxsel.proto against the rules docs/api.md ("API conventions")
states, following Google's API design guide, so that a field or enum added
later cannot quietly break them:

  * go_package and java_package are set;
  * every enum value is prefixed with its enum's name in UPPER_SNAKE_CASE,
    and the zero value is <NAME>_UNSPECIFIED;
  * every field's comment starts a line with its behaviour: "Required",
    "Optional" or "Output only" (AIP-203);
  * no integer field carries a duration or a time (google.protobuf.Duration
    and Timestamp do): no *_ms, *_seconds, *unix* names.

usage: api_style_test.py [PROTO]   (default: the runfile)
"""
import os
import re
import sys

LABEL = re.compile(r"^\s*// (Required|Optional|Output only)\b")
FIELD = re.compile(
    r"^\s*(?:repeated |optional )?(map<[^>]*>|[\w.]+) (\w+) = \d+;")
ENUM_VALUE = re.compile(r"^\s*(\w+) = (\d+);")
OPEN = re.compile(r"^\s*(message|enum|service|oneof) (\w+) \{")
TIME_NAME = re.compile(r"(_ms|_us|_ns|_seconds|_secs)$|unix")


def upper_snake(name):
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).upper()


def check(lines):
    errors = []
    text = "\n".join(lines)
    for option in ("go_package", "java_package"):
        if not re.search(r"^option %s = \"[^\"]+\";" % option, text, re.M):
            errors.append("option %s is not set" % option)
    stack = []
    for number, line in enumerate(lines, 1):
        opened = OPEN.match(line)
        if opened:
            stack.append(opened.groups())
            continue
        if re.match(r"^\s*\}", line) and stack:
            stack.pop()
            continue
        if not stack:
            continue
        kind, name = stack[-1]
        where = "%d: %s" % (number, name)
        if kind == "enum":
            value = ENUM_VALUE.match(line)
            if not value:
                continue
            prefix = upper_snake(name) + "_"
            if not value.group(1).startswith(prefix):
                errors.append("%s.%s: not prefixed %s" %
                              (where, value.group(1), prefix))
            if value.group(2) == "0" and value.group(1) != prefix + "UNSPECIFIED":
                errors.append("%s.%s: the zero value must be %sUNSPECIFIED" %
                              (where, value.group(1), prefix))
            continue
        field = FIELD.match(line)
        if kind not in ("message", "oneof") or not field:
            continue
        field_type, field_name = field.groups()
        block = []
        i = number - 2
        while i >= 0 and lines[i].strip().startswith("//"):
            block.append(lines[i])
            i -= 1
        if not any(LABEL.match(b) for b in block):
            errors.append("%s.%s: no Required/Optional/Output only comment" %
                          (where, field_name))
        if re.match(r"u?int(32|64)$", field_type) and TIME_NAME.search(field_name):
            errors.append("%s.%s: a duration or time as an integer; use "
                          "google.protobuf.Duration or Timestamp" %
                          (where, field_name))
    return errors


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.environ.get("TEST_SRCDIR", "."), os.environ.get("TEST_WORKSPACE", ""),
        "proto/ctxsel/v1/ctxsel.proto")
    with open(path) as f:
        errors = check(f.read().split("\n"))
    for e in errors:
        print("%s:%s" % (path, e))
    if errors:
        sys.exit(1)
    print("ok: %s follows the API conventions" % path)


if __name__ == "__main__":
    main()
