// SPDX-License-Identifier: GPL-2.0
/* net/ib/mlhs.c, compiled as it is for the user-space unit tests. */
#include "../../../net/ib/mlhs.c"
