/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The frame contents of vb2-edu (testdrv/vb2-edu.c), shared with the guest
 * program that checks them (tools/guest/vb2-edu.c): byte @off of plane
 * @plane of frame @seq. Capture frames carry it with the buffer's sequence
 * number; an output frame must carry it with the sequence number that user
 * space puts in the buffer's time stamp (microseconds, seconds 0).
 *
 * Every byte depends on all three, so a transfer to the wrong address, the
 * wrong plane, a stale frame or a missing cache synchronisation shows up as
 * a mismatch.
 */
#ifndef VB2_EDU_PATTERN_H
#define VB2_EDU_PATTERN_H

static inline unsigned char vb2_edu_byte(unsigned int seq, unsigned int plane,
					 unsigned int off)
{
	unsigned int x = (seq + 1) * 0x9e3779b1u ^ (plane + 1) * 0x85ebca6bu ^
			 (off >> 2) * 0xc2b2ae35u;

	x ^= x >> 15;
	x *= 0x2c1b3c6du;
	x ^= x >> 12;
	return x >> (8 * (off & 3));
}

#endif
