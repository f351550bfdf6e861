// json_output.h: a JSON document printed in the -o format, for the
// commands whose result is JSON rather than a proto message (eval, archs,
// import), and YAML for all of them.
//
//   PrintJsonDocument(result);  // -o json: JSON; -o yaml: YAML; false else
#ifndef CTXSEL_CLIENT_CLI_JSON_OUTPUT_H_
#define CTXSEL_CLIENT_CLI_JSON_OUTPUT_H_

#include <string>

#include "nlohmann/json.hpp"

namespace ctxsel::cli {

// `json` as block-style YAML; strings JSON-quoted (YAML reads them as
// double-quoted scalars), keys in the document's order.
std::string JsonToYaml(const nlohmann::ordered_json& json);

// With -o json (or --json) prints `json` indented, with -o yaml as YAML, and
// returns true; false for the other formats, which the command prints itself.
bool PrintJsonDocument(const nlohmann::ordered_json& json);
bool PrintJsonDocument(const nlohmann::json& json);

}  // namespace ctxsel::cli

#endif  // CTXSEL_CLIENT_CLI_JSON_OUTPUT_H_
