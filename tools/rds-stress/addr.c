// SPDX-License-Identifier: GPL-2.0
/*
 * Addresses of either family: IPv4, or IPv6 with, for a link-local one,
 * the scope id (the index of the interface it lives on: "fe80::1%eth0"
 * or "fe80::1%2").  RDS and the control connection use the same address.
 */
#include <arpa/inet.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rds_stress.h"

int addr_linklocal(const struct rs_addr *a)
{
	return a->family == AF_INET6 && IN6_IS_ADDR_LINKLOCAL(&a->a6);
}

int addr_parse(const char *s, struct rs_addr *a)
{
	char buf[INET6_ADDRSTRLEN + IF_NAMESIZE + 2], *pct, *end;
	unsigned long v;

	memset(a, 0, sizeof(*a));
	if (inet_pton(AF_INET, s, &a->a4) == 1) {
		a->family = AF_INET;
		return 0;
	}
	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	pct = strchr(buf, '%');
	if (pct)
		*pct++ = '\0';
	if (inet_pton(AF_INET6, buf, &a->a6) != 1)
		return -1;
	a->family = AF_INET6;
	/* a v4-mapped address is the IPv4 one, as RDS takes it */
	if (IN6_IS_ADDR_V4MAPPED(&a->a6)) {
		if (pct)
			return -1;
		a->family = AF_INET;
		memcpy(&a->a4, &a->a6.s6_addr[12], 4);
		memset(&a->a6, 0, sizeof(a->a6));
		return 0;
	}
	if (!pct)
		return 0;
	v = strtoul(pct, &end, 10);
	if (*pct && !*end && v && v <= 0xffffffffUL)
		a->scope = (uint32_t)v;
	else
		a->scope = if_nametoindex(pct);
	return a->scope ? 0 : -1;
}

void addr_str(const struct rs_addr *a, char *buf, size_t len)
{
	char s[INET6_ADDRSTRLEN];

	if (a->family == AF_INET6) {
		inet_ntop(AF_INET6, &a->a6, s, sizeof(s));
		if (a->scope)
			snprintf(buf, len, "%s%%%u", s, a->scope);
		else
			snprintf(buf, len, "%s", s);
	} else {
		inet_ntop(AF_INET, &a->a4, s, sizeof(s));
		snprintf(buf, len, "%s", s);
	}
}

void addr_port_str(const struct rs_addr *a, unsigned int port, char *buf,
		   size_t len)
{
	char s[ADDR_STRLEN];

	addr_str(a, s, sizeof(s));
	snprintf(buf, len, a->family == AF_INET6 ? "[%s]:%u" : "%s:%u", s,
		 port);
}

socklen_t addr_sockaddr(const struct rs_addr *a, unsigned int port,
			struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (a->family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_addr = a->a6;
		s6->sin6_port = htons(port);
		s6->sin6_scope_id = a->scope;
		return sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

		s4->sin_family = AF_INET;
		s4->sin_addr = a->a4;
		s4->sin_port = htons(port);
		return sizeof(*s4);
	}
}

int addr_of_sockaddr(const struct sockaddr *sa, struct rs_addr *a,
		     unsigned int *port)
{
	memset(a, 0, sizeof(*a));
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;

		a->family = AF_INET;
		a->a4 = s4->sin_addr;
		if (port)
			*port = ntohs(s4->sin_port);
		return 0;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;

		if (port)
			*port = ntohs(s6->sin6_port);
		if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
			a->family = AF_INET;
			memcpy(&a->a4, &s6->sin6_addr.s6_addr[12], 4);
			return 0;
		}
		a->family = AF_INET6;
		a->a6 = s6->sin6_addr;
		if (IN6_IS_ADDR_LINKLOCAL(&a->a6))
			a->scope = s6->sin6_scope_id;
		return 0;
	}
	return -1;
}

int addr_equal(const struct rs_addr *a, const struct rs_addr *b)
{
	if (a->family != b->family)
		return 0;
	if (a->family == AF_INET)
		return a->a4.s_addr == b->a4.s_addr;
	return !memcmp(&a->a6, &b->a6, sizeof(a->a6)) && a->scope == b->scope;
}
