// SPDX-License-Identifier: GPL-2.0
/* net/exthdr.c, compiled as it is for the user-space unit tests. */
#include "../../../net/exthdr.c"
