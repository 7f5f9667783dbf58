#include "compiler/b/Y.h"
#include "compiler/a/X.h"
