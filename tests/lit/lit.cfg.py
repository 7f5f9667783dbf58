# lit configuration of the pass tests (tests/lit/README.md). ctest runs
# lit with the built `spyre` and LLVM's FileCheck as parameters.
import os

import lit.formats

config.name = "spyre-passes"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".ir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = lit_config.params.get("exec_root", config.test_source_root)
config.excludes = ["Inputs"]

spyre = lit_config.params["spyre"]
filecheck = lit_config.params["filecheck"]
config.substitutions.append(("%spyre", spyre))
config.substitutions.append(("%FileCheck", filecheck))
config.environment["SYSTEMC_DISABLE_COPYRIGHT_MESSAGE"] = "1"
