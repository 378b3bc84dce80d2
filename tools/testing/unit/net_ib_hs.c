// SPDX-License-Identifier: GPL-2.0
/* net/ib/hs.c, compiled as it is for the user-space unit tests. */
#include "../../../net/ib/hs.c"
