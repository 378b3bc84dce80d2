// SPDX-License-Identifier: GPL-2.0
/* net/ib/srqsize.c, compiled as it is for the user-space unit tests. */
#include "../../../net/ib/srqsize.c"
