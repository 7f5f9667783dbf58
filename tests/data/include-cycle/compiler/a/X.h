// Fixture of Includes.FindsACycle: a module whose .cpp includes a header
// that includes it back, in another folder.
#pragma once
#include "compiler/b/Y.h"
