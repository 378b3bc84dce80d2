// SPDX-License-Identifier: GPL-2.0
/* net/seq.c, compiled as it is for the user-space unit tests. */
#include "../../../net/seq.c"
