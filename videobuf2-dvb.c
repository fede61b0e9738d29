// SPDX-License-Identifier: GPL-2.0
/*
 * videobuf2-dvb: DVB adapters whose transport stream comes from a vb2 queue.
 *
 * See include/media/videobuf2-dvb.h for the sequence a driver follows.
 */

#include <linux/cleanup.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <media/videobuf2-dvb.h>

/**
 * DOC: how the stream flows
 *
 * Every frontend of a bus owns a capture queue (&vb2_dvb.dvbq) and a
 * software demux. Nothing streams until user space starts a demux feed
 * (a PES or section filter on demuxN, or reading dvrN). The first feed
 * starts a vb2 thread on the queue; the thread dequeues each filled buffer,
 * hands its payload to dvb_dmx_swfilter() and queues the buffer again.
 * When the last feed stops, the thread stops and the buffers are freed.
 * &vb2_dvb.lock makes the feed count and the thread change together.
 */

/**
 * DOC: registration and teardown
 *
 * Registering a frontend goes through a fixed list of stages (&enum
 * vb2_dvb_stage). Setting up walks the list forward; the one teardown
 * function walks it backward from the last stage reached, so a failure
 * half-way and vb2_dvb_unregister_bus() undo exactly the same steps.
 *
 * The frontend list (&vb2_dvb_frontends.felist) changes only in
 * vb2_dvb_alloc_frontend() and vb2_dvb_dealloc_frontends(), both called
 * from the driver's probe and remove paths, which the driver serialises
 * with registration. The list lock is held for lookups and list changes
 * but not while devices are unregistered: closing a device node may call
 * back into the driver, which may look frontends up (cx88's ts_bus_ctrl
 * does), and unregistering waits for those users to go.
 */

/* Feed the demux with one filled buffer; called by the vb2 thread. */
static int vb2_dvb_push_buffer(struct vb2_buffer *vb, void *priv)
{
	struct vb2_dvb *dvb = priv;
	const u8 *data = vb2_plane_vaddr(vb, 0);

	if (data)
		dvb_dmx_swfilter(&dvb->demux, data,
				 vb2_get_plane_payload(vb, 0));
	return 0;
}

/* dvb_demux callback: a feed starts; the first one starts the stream. */
static int vb2_dvb_start_feed(struct dvb_demux_feed *feed)
{
	struct vb2_dvb *dvb = feed->demux->priv;
	int ret = 0;

	if (!feed->demux->dmx.frontend)
		return -EINVAL;

	mutex_lock(&dvb->lock);
	/* The thread is named after the adapter's driver, as in 6.12. */
	if (!dvb->nfeeds)
		ret = vb2_thread_start(&dvb->dvbq, vb2_dvb_push_buffer, dvb,
				       dvb->name);
	if (!ret)
		dvb->nfeeds++;
	mutex_unlock(&dvb->lock);
	return ret;
}

/* dvb_demux callback: a feed stops; the last one stops the stream. */
static int vb2_dvb_stop_feed(struct dvb_demux_feed *feed)
{
	struct vb2_dvb *dvb = feed->demux->priv;
	int ret = 0;

	mutex_lock(&dvb->lock);
	if (dvb->nfeeds && !--dvb->nfeeds)
		ret = vb2_thread_stop(&dvb->dvbq);
	mutex_unlock(&dvb->lock);
	return ret;
}

/*
 * The stages of a registered frontend, in setup order. Each value means
 * "this step is done"; teardown undoes the steps from the last one reached.
 */
enum vb2_dvb_stage {
	VB2_DVB_NOTHING,
	VB2_DVB_FRONTEND,	/* dvb_register_frontend() */
	VB2_DVB_DEMUX,		/* dvb_dmx_init() */
	VB2_DVB_DMXDEV,		/* dvb_dmxdev_init(): demux and dvr nodes */
	VB2_DVB_SOURCE_HW,	/* the "frontend 0" demux source */
	VB2_DVB_SOURCE_MEM,	/* the "memory" demux source */
	VB2_DVB_CONNECTED,	/* demux reads from the hardware source */
	VB2_DVB_NET,		/* dvb_net_init() */
	VB2_DVB_ALL = VB2_DVB_NET,
};

static void vb2_dvb_undo(struct vb2_dvb *dvb, enum vb2_dvb_stage reached)
{
	struct dmx_demux *dmx = &dvb->demux.dmx;

	switch (reached) {
	case VB2_DVB_NET:
		dvb_net_release(&dvb->net);
		fallthrough;
	case VB2_DVB_CONNECTED:
		dmx->disconnect_frontend(dmx);
		fallthrough;
	case VB2_DVB_SOURCE_MEM:
		dmx->remove_frontend(dmx, &dvb->fe_mem);
		fallthrough;
	case VB2_DVB_SOURCE_HW:
		dmx->remove_frontend(dmx, &dvb->fe_hw);
		fallthrough;
	case VB2_DVB_DMXDEV:
		dvb_dmxdev_release(&dvb->dmxdev);
		fallthrough;
	case VB2_DVB_DEMUX:
		dvb_dmx_release(&dvb->demux);
		fallthrough;
	case VB2_DVB_FRONTEND:
		dvb_unregister_frontend(dvb->frontend);
		fallthrough;
	case VB2_DVB_NOTHING:
		break;
	}
}

static void vb2_dvb_setup_demux(struct vb2_dvb *dvb)
{
	struct dvb_demux *demux = &dvb->demux;

	demux->priv = dvb;
	demux->filternum = 256;
	demux->feednum = 256;
	demux->start_feed = vb2_dvb_start_feed;
	demux->stop_feed = vb2_dvb_stop_feed;
	demux->dmx.capabilities = DMX_TS_FILTERING | DMX_SECTION_FILTERING |
				  DMX_MEMORY_BASED_FILTERING;

	dvb->dmxdev.demux = &demux->dmx;
	dvb->dmxdev.filternum = demux->filternum;
	dvb->dmxdev.capabilities = 0;
	dvb->fe_hw.source = DMX_FRONTEND_0;
	dvb->fe_mem.source = DMX_MEMORY_FE;
}

/* Do one setup step; returns 0 or a negative error. */
static int vb2_dvb_do(struct dvb_adapter *adap, struct vb2_dvb *dvb,
		      enum vb2_dvb_stage step)
{
	struct dmx_demux *dmx = &dvb->demux.dmx;

	switch (step) {
	case VB2_DVB_FRONTEND:
		return dvb_register_frontend(adap, dvb->frontend);
	case VB2_DVB_DEMUX:
		vb2_dvb_setup_demux(dvb);
		return dvb_dmx_init(&dvb->demux);
	case VB2_DVB_DMXDEV:
		return dvb_dmxdev_init(&dvb->dmxdev, adap);
	case VB2_DVB_SOURCE_HW:
		return dmx->add_frontend(dmx, &dvb->fe_hw);
	case VB2_DVB_SOURCE_MEM:
		return dmx->add_frontend(dmx, &dvb->fe_mem);
	case VB2_DVB_CONNECTED:
		return dmx->connect_frontend(dmx, &dvb->fe_hw);
	case VB2_DVB_NET:
		return dvb_net_init(adap, &dvb->net, dmx);
	default:
		return -EINVAL;
	}
}

static int vb2_dvb_register_frontend(struct dvb_adapter *adap,
				     struct vb2_dvb_frontend *fe)
{
	struct vb2_dvb *dvb = &fe->dvb;
	enum vb2_dvb_stage done;
	int ret;

	if (!dvb->frontend)
		return -EINVAL;

	for (done = VB2_DVB_NOTHING; done < VB2_DVB_ALL; done++) {
		ret = vb2_dvb_do(adap, dvb, done + 1);
		if (ret < 0) {
			pr_warn("vb2-dvb: adapter %d frontend %d: step %d failed (%d)\n",
				adap->num, fe->id, done + 1, ret);
			vb2_dvb_undo(dvb, done);
			return ret;
		}
	}
	mutex_lock(&dvb->lock);
	dvb->registered = true;
	mutex_unlock(&dvb->lock);
	return 0;
}

static void vb2_dvb_unregister_frontend(struct vb2_dvb_frontend *fe)
{
	struct vb2_dvb *dvb = &fe->dvb;
	bool registered;

	mutex_lock(&dvb->lock);
	registered = dvb->registered;
	dvb->registered = false;
	mutex_unlock(&dvb->lock);

	if (registered)
		vb2_dvb_undo(dvb, VB2_DVB_ALL);
}

/* Unregister every frontend of the bus (see "registration and teardown"). */
static void vb2_dvb_unregister_frontends(struct vb2_dvb_frontends *f)
{
	struct vb2_dvb_frontend *fe;

	list_for_each_entry(fe, &f->felist, felist)
		vb2_dvb_unregister_frontend(fe);
}

/**
 * vb2_dvb_register_bus() - register the adapter and all its frontends
 * @f:		the bus; every frontend on @f->felist has an attached
 *		&vb2_dvb.frontend and an initialised &vb2_dvb.dvbq.
 * @module:	the driver module (THIS_MODULE), owner of the device nodes.
 * @adapter_priv: stored in &dvb_adapter.priv; demodulator callbacks find
 *		it through &dvb_frontend.dvb.
 * @device:	the parent device of the adapter.
 * @mdev:	media device to register the DVB entities with, or NULL.
 * @adapter_nr:	the driver's adapter_nr module parameter array.
 * @mfe_shared:	for several frontends on one bus: 0 if they can be used
 *		at the same time, 1 if opening one waits for the others to be
 *		closed, 2 if it fails with -EBUSY (see &dvb_adapter.mfe_shared).
 *
 * Registers the DVB adapter, named after the first frontend, then for each
 * frontend the frontend device, a software demux with its demux and dvr
 * nodes, and a network interface.
 *
 * On failure everything registered so far is unregistered again, but the
 * frontends stay attached and allocated: the caller then calls
 * vb2_dvb_dealloc_frontends().
 *
 * Return: 0 or a negative error code (-EINVAL if @f has no frontend).
 */
int vb2_dvb_register_bus(struct vb2_dvb_frontends *f, struct module *module,
			 void *adapter_priv, struct device *device,
			 struct media_device *mdev, short *adapter_nr,
			 int mfe_shared)
{
	struct vb2_dvb_frontend *fe;
	int ret;

	fe = list_first_entry_or_null(&f->felist, struct vb2_dvb_frontend,
				      felist);
	if (!fe)
		return -EINVAL;

	ret = dvb_register_adapter(&f->adapter, fe->dvb.name, module, device,
				   adapter_nr);
	if (ret < 0)
		return ret;
	/* dvb_register_adapter() clears these; set them before any open(). */
	f->adapter.priv = adapter_priv;
	f->adapter.mfe_shared = mfe_shared;
	dvb_register_media_controller(&f->adapter, mdev);

	list_for_each_entry(fe, &f->felist, felist) {
		ret = vb2_dvb_register_frontend(&f->adapter, fe);
		if (ret)
			goto unregister;
	}

	/* The analog side (if any) creates the RF connector. */
	ret = dvb_create_media_graph(&f->adapter, false);
	if (ret)
		goto unregister;
	return 0;

unregister:
	vb2_dvb_unregister_frontends(f);
	dvb_unregister_adapter(&f->adapter);
	return ret;
}
EXPORT_SYMBOL(vb2_dvb_register_bus);

/**
 * vb2_dvb_unregister_bus() - undo vb2_dvb_register_bus() and free the bus
 * @f:		a bus registered with vb2_dvb_register_bus().
 *
 * Unregisters every frontend's device nodes (waiting for the demux and dvr
 * nodes to be closed), detaches and frees the frontends like
 * vb2_dvb_dealloc_frontends(), then unregisters the adapter. Afterwards
 * @f->felist is empty and the &struct vb2_dvb_frontend pointers the driver
 * kept are invalid.
 */
void vb2_dvb_unregister_bus(struct vb2_dvb_frontends *f)
{
	vb2_dvb_unregister_frontends(f);
	vb2_dvb_dealloc_frontends(f);
	dvb_unregister_adapter(&f->adapter);
}
EXPORT_SYMBOL(vb2_dvb_unregister_bus);

/**
 * vb2_dvb_get_frontend() - look a frontend up by number
 * @f:		the bus.
 * @id:		the number given to vb2_dvb_alloc_frontend().
 *
 * Return: the frontend, or NULL if there is none with that number.
 */
struct vb2_dvb_frontend *vb2_dvb_get_frontend(struct vb2_dvb_frontends *f,
					      int id)
{
	struct vb2_dvb_frontend *fe;

	guard(mutex)(&f->lock);
	list_for_each_entry(fe, &f->felist, felist)
		if (fe->id == id)
			return fe;
	return NULL;
}
EXPORT_SYMBOL(vb2_dvb_get_frontend);

/**
 * vb2_dvb_find_frontend() - number of the frontend that holds a demodulator
 * @f:		the bus.
 * @p:		a demodulator attached to one of the frontends of @f.
 *
 * Return: the frontend's number (&vb2_dvb_frontend.id), or 0 if @p belongs
 * to none of them.
 */
int vb2_dvb_find_frontend(struct vb2_dvb_frontends *f, struct dvb_frontend *p)
{
	struct vb2_dvb_frontend *fe;

	guard(mutex)(&f->lock);
	list_for_each_entry(fe, &f->felist, felist)
		if (fe->dvb.frontend == p)
			return fe->id;
	return 0;
}
EXPORT_SYMBOL(vb2_dvb_find_frontend);

/**
 * vb2_dvb_alloc_frontend() - add a frontend to a bus
 * @f:		the bus, its @felist and @lock initialised by the driver.
 * @id:		the frontend's number, 1 for the first; it names the frontend
 *		for vb2_dvb_get_frontend() and in &vb2_dvb_frontends.gate and
 *		&vb2_dvb_frontends.active_fe_id.
 *
 * The new frontend is zeroed and appended to @f->felist. The driver then
 * fills its &vb2_dvb (queue, name, demodulator).
 *
 * Return: the frontend, or NULL if memory ran out.
 */
struct vb2_dvb_frontend *vb2_dvb_alloc_frontend(struct vb2_dvb_frontends *f,
						int id)
{
	struct vb2_dvb_frontend *fe = kzalloc(sizeof(*fe), GFP_KERNEL);

	if (fe) {
		fe->id = id;
		mutex_init(&fe->dvb.lock);
		scoped_guard(mutex, &f->lock)
			list_add_tail(&fe->felist, &f->felist);
	}
	return fe;
}
EXPORT_SYMBOL(vb2_dvb_alloc_frontend);

/**
 * vb2_dvb_dealloc_frontends() - detach and free all frontends of a bus
 * @f:		the bus.
 *
 * For the error paths of probing, after vb2_dvb_alloc_frontend() or after
 * vb2_dvb_register_bus() failed: every attached demodulator is detached
 * (dvb_frontend_detach()) and every frontend freed. A frontend that is
 * still registered is unregistered first. The queues (&vb2_dvb.dvbq) are
 * the driver's; they have no buffers unless the driver allocated some.
 * @f->felist is empty afterwards.
 */
void vb2_dvb_dealloc_frontends(struct vb2_dvb_frontends *f)
{
	struct vb2_dvb_frontend *fe, *tmp;
	LIST_HEAD(gone);

	scoped_guard(mutex, &f->lock)
		list_splice_init(&f->felist, &gone);

	list_for_each_entry_safe(fe, tmp, &gone, felist) {
		vb2_dvb_unregister_frontend(fe);
		if (fe->dvb.frontend)
			dvb_frontend_detach(fe->dvb.frontend);
		list_del(&fe->felist);
		mutex_destroy(&fe->dvb.lock);
		kfree(fe);
	}
}
EXPORT_SYMBOL(vb2_dvb_dealloc_frontends);

MODULE_DESCRIPTION("videobuf2 helpers for DVB adapters fed by a vb2 queue");
MODULE_LICENSE("GPL");
