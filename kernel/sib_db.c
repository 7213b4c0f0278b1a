// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib: the doorbell file. A user context may ask for a file of its own
 * (SIB_UCTX_REQ_DB_FD) whose write() only kicks one of the context's QPs:
 * the same doorbell as a legacy POST_SEND or POST_RECV command without
 * work requests, without uverbs' command path (header, copies, the
 * uobject lookup). See "The doorbell file" in rdma_user_sib.h.
 *
 * Life time: the file and the context each hold a reference on struct
 * sib_db. The context's dealloc (also after a disassociate) takes @sem for
 * writing and cuts @uctx; a doorbell holds @sem for reading from the
 * moment it reads @uctx until it has let go of the QP, so it never sees a
 * context that is being freed. ib_core destroys a context's QPs before
 * the context, and sib_destroy_qp() waits for the QP reference that the
 * doorbell holds.
 */
#include <linux/anon_inodes.h>
#include <linux/cred.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/slab.h>

#include "sib_db.h"
#include "sib_qp.h"
#include "sib_task.h"

/**
 * struct sib_db - a doorbell file's state
 * @sem:  read: a doorbell in flight; write: the context going away
 * @uctx: the context, or NULL once it is gone; under @sem
 * @ref:  one for the file, one for the context
 */
struct sib_db {
	struct rw_semaphore sem;
	struct sib_ucontext *uctx;
	refcount_t ref;
};

static void sib_db_put(struct sib_db *db)
{
	if (refcount_dec_and_test(&db->ref))
		kfree(db);
}

/* Kick QP @qpn of @uctx; -EINVAL if it is not one of the context's QPs. */
static int sib_db_kick(struct sib_ucontext *uctx, const struct sib_db_req *req)
{
	struct sib_dev *sdev = to_sdev(uctx->ib_uc.device);
	struct sib_qp *qp;

	qp = sib_qp_get(sdev, req->qpn);
	if (!qp)
		return -EINVAL;
	if (qp->uctx != uctx) {
		sib_qp_put(qp);
		return -EINVAL;
	}
	sib_qp_doorbell(qp, req->op == SIB_DB_RQ,
			req->op == (SIB_DB_SQ | SIB_DB_F_STREAM));
	sib_qp_put(qp);
	return 0;
}

static ssize_t sib_db_write(struct file *file, const char __user *buf,
			    size_t count, loff_t *ppos)
{
	struct sib_db *db = file->private_data;
	struct sib_db_req req;
	int ret;

	/*
	 * Only the process that opened the context (as uverbs' own command
	 * file): not a child after fork(), not a process that was handed
	 * the descriptor, not a write done on its behalf with other rights.
	 */
	if (file->f_cred != current_cred())
		return -EACCES;
	if (count != sizeof(req))
		return -EINVAL;
	if (copy_from_user(&req, buf, sizeof(req)))
		return -EFAULT;
	if (req.op != SIB_DB_SQ && req.op != SIB_DB_RQ &&
	    req.op != (SIB_DB_SQ | SIB_DB_F_STREAM))
		return -EINVAL;

	down_read(&db->sem);
	if (db->uctx)
		ret = sib_db_kick(db->uctx, &req);
	else
		ret = -EIO;
	up_read(&db->sem);
	return ret ? ret : sizeof(req);
}

static int sib_db_release(struct inode *inode, struct file *file)
{
	sib_db_put(file->private_data);
	return 0;
}

static const struct file_operations sib_db_fops = {
	.owner = THIS_MODULE,
	.write = sib_db_write,
	.release = sib_db_release,
};

/*
 * Make the doorbell file of @uctx. The caller installs it in its file
 * table (fd_install()) once nothing can fail any more, or drops it with
 * fput() and sib_db_close().
 */
int sib_db_open(struct sib_ucontext *uctx, struct file **filep)
{
	struct sib_db *db;
	struct file *file;

	db = kzalloc(sizeof(*db), GFP_KERNEL);
	if (!db)
		return -ENOMEM;
	init_rwsem(&db->sem);
	db->uctx = uctx;
	refcount_set(&db->ref, 2);
	file = anon_inode_getfile("[sib_db]", &sib_db_fops, db,
				  O_WRONLY | O_CLOEXEC);
	if (IS_ERR(file)) {
		kfree(db);
		return PTR_ERR(file);
	}
	uctx->db = db;
	*filep = file;
	return 0;
}

/* The context goes away: its doorbell file, if still open, fails with EIO. */
void sib_db_close(struct sib_ucontext *uctx)
{
	struct sib_db *db = uctx->db;

	if (!db)
		return;
	down_write(&db->sem);
	db->uctx = NULL;
	up_write(&db->sem);
	uctx->db = NULL;
	sib_db_put(db);
}
