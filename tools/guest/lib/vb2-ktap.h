/* SPDX-License-Identifier: GPL-2.0 */
/*
 * For the guest programs that report KTAP: giving up when a setup step fails.
 *
 * Header-only, and included after the tree's kselftest.h: kselftest.h keeps its
 * counters in static variables of the program's own file, so these must be
 * compiled there too. The measuring programs, which report figures, do not use it.
 */
#ifndef VB2_KTAP_H
#define VB2_KTAP_H

#include "vb2-guest.h"

/* KTAP's "Bail out!" with a printf-style message, then exit(KSFT_FAIL). */
#define vb2_bail(fmt, ...) ksft_exit_fail_msg(fmt "\n", ##__VA_ARGS__)

/* An ioctl that setup needs: bail out, naming @name and @what, if it fails. */
static inline void vb2_must_ioctl_named(int fd, unsigned long req, void *arg,
					const char *name, const char *what)
{
	int r = vb2_ioctl(fd, req, arg);

	if (r < 0)
		vb2_bail("%s: %s: %s", what, name, vb2_errname(r));
}

/* The same, with the request's name as its macro spelled it (VIDIOC_QBUF). */
#define vb2_must_ioctl(fd, req, arg, what) vb2_must_ioctl_named(fd, req, arg, #req, what)

#endif /* VB2_KTAP_H */
