// What `spyre --version` prints: the release and git revision of this build,
// and everything a result depends on besides the inputs, so that a run can be
// reproduced (or a bug report placed): the ISA version of the program files
// it writes, the fingerprint of its built-in config, and the versions of the
// SystemC, ONNX and protobuf libraries it was built with.
#pragma once

#include <string>

namespace spyre::cli {

/// The `--version` text, one `key  value` line each after the first.
std::string versionText();

} // namespace spyre::cli
