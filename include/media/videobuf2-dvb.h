/* SPDX-License-Identifier: GPL-2.0 */
/*
 * videobuf2-dvb: a DVB adapter whose transport stream arrives in vb2 buffers.
 *
 * A few PCI TV cards (cx88, cx23885, saa7134, netup_unidvb) capture the
 * MPEG transport stream with the same DMA engine and videobuf2 queue they
 * use for video. This helper turns such a queue into a complete DVB adapter:
 * one adapter per bus, and for every frontend on it a demux, a dmxdev
 * (demuxN/dvrN nodes) and a network interface. While at least one demux
 * feed is running, a vb2 thread streams the queue and pushes every filled
 * buffer into the software demux.
 *
 * Use:
 *  1. mutex_init(&f->lock) and INIT_LIST_HEAD(&f->felist), then
 *     vb2_dvb_alloc_frontend() for ids 1..n.
 *  2. For each frontend: set up and vb2_queue_init() &vb2_dvb.dvbq (a
 *     capture queue with %VB2_READ), set &vb2_dvb.name, attach the
 *     demodulator to &vb2_dvb.frontend.
 *  3. vb2_dvb_register_bus(). If that or step 2 fails:
 *     vb2_dvb_dealloc_frontends().
 *  4. On removal: vb2_dvb_unregister_bus().
 */
#ifndef _MEDIA_VIDEOBUF2_DVB_H
#define _MEDIA_VIDEOBUF2_DVB_H

#include <media/dvbdev.h>
#include <media/dmxdev.h>
#include <media/dvb_demux.h>
#include <media/dvb_net.h>
#include <media/dvb_frontend.h>
#include <media/videobuf2-v4l2.h>

struct media_device;

/**
 * struct vb2_dvb - the DVB side of one frontend
 *
 * Rules for the members (who writes them, under which lock):
 *
 * D: set by the driver before vb2_dvb_register_bus(), read-only afterwards.
 *
 * R: set by vb2_dvb_register_bus(), torn down by vb2_dvb_unregister_bus();
 *    the driver may read them while the bus is registered.
 *
 * L: @lock.
 *
 * @name:	(D) name of the adapter (the first frontend's names it) and
 *		of the frontend's vb2 thread. dvb-core keeps the pointer, so
 *		it must outlive the bus.
 * @frontend:	(D) the attached demodulator; vb2_dvb_register_bus()
 *		registers it, unregistering the bus or freeing the frontends
 *		detaches it.
 * @dvbq:	(D) the capture queue carrying the transport stream,
 *		initialised by the driver with vb2_queue_init(). Each buffer
 *		holds whole 188-byte packets; the helper streams it with
 *		vb2_thread_start() (thread "vb2-" followed by @name, as in
 *		6.12) while feeds run.
 * @lock:	serialises starting and stopping the vb2 thread.
 * @nfeeds:	(L) number of running demux feeds; the thread runs while it
 *		is not zero.
 * @demux:	(R) software demux fed from @dvbq. Drivers with a hardware
 *		PID filter may look at its feeds.
 * @dmxdev:	(R) the demux and dvr device nodes.
 * @fe_hw:	(R) demux source "frontend 0", connected.
 * @fe_mem:	(R) demux source "memory", for dvr writes.
 * @net:	(R) the DVB network interface.
 * @registered:	(L) the members marked R are set up.
 */
struct vb2_dvb {
	char			*name;
	struct dvb_frontend	*frontend;
	struct vb2_queue	dvbq;

	struct mutex		lock;		/* nfeeds + the thread */
	int			nfeeds;

	struct dvb_demux	demux;
	struct dmxdev		dmxdev;
	struct dmx_frontend	fe_hw;
	struct dmx_frontend	fe_mem;
	struct dvb_net		net;
	bool			registered;
};

/**
 * struct vb2_dvb_frontend - one frontend of a bus
 * @felist:	(F) entry in &vb2_dvb_frontends.felist.
 * @id:		(I) the number the driver gave vb2_dvb_alloc_frontend(),
 *		1 for the first frontend.
 * @dvb:	the frontend's demodulator, queue and demux.
 *
 * F: &vb2_dvb_frontends.lock. I: set at allocation, never changes.
 */
struct vb2_dvb_frontend {
	struct list_head	felist;
	int			id;
	struct vb2_dvb		dvb;
};

/**
 * struct vb2_dvb_frontends - a bus: one DVB adapter and its frontends
 * @felist:	(F) the &struct vb2_dvb_frontend list, in allocation order.
 *		The driver initialises it with INIT_LIST_HEAD().
 * @lock:	protects @felist. The driver initialises it with
 *		mutex_init().
 * @adapter:	the DVB adapter, registered by vb2_dvb_register_bus();
 *		&dvb_adapter.priv is the adapter_priv given there, and a
 *		driver may fill &dvb_adapter.proposed_mac.
 * @active_fe_id: (V) the frontend that currently owns the transport
 *		stream, 0 for none. Only drivers read and write it.
 * @gate:	(V) the frontend whose demodulator controls the I2C gate
 *		(0: single frontend or the first, n: frontend n). Only
 *		drivers read and write it.
 *
 * F: @lock. V: the driver's own locking; the helper never touches it.
 */
struct vb2_dvb_frontends {
	struct list_head	felist;
	struct mutex		lock;		/* felist */
	struct dvb_adapter	adapter;
	int			active_fe_id;
	int			gate;
};

int vb2_dvb_register_bus(struct vb2_dvb_frontends *f,
			 struct module *module,
			 void *adapter_priv,
			 struct device *device,
			 struct media_device *mdev,
			 short *adapter_nr,
			 int mfe_shared);

void vb2_dvb_unregister_bus(struct vb2_dvb_frontends *f);

struct vb2_dvb_frontend *vb2_dvb_alloc_frontend(struct vb2_dvb_frontends *f,
						int id);
void vb2_dvb_dealloc_frontends(struct vb2_dvb_frontends *f);

struct vb2_dvb_frontend *vb2_dvb_get_frontend(struct vb2_dvb_frontends *f,
					      int id);
int vb2_dvb_find_frontend(struct vb2_dvb_frontends *f,
			  struct dvb_frontend *p);

#endif /* _MEDIA_VIDEOBUF2_DVB_H */
