#include "golden/verify.h"
