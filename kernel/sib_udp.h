/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: the RoCEv2 UDP sockets of each network namespace, and which device
 * a packet on them is for (sib_udp.c).
 */
#ifndef SIB_UDP_H
#define SIB_UDP_H

struct sib_dev;
struct sib_ns;

int sib_udp_init(void);
void sib_udp_exit(void);
int sib_udp_dev_init(struct sib_dev *sdev);
void sib_udp_dev_fini(struct sib_dev *sdev);
void sib_udp_dev_moved(struct sib_dev *sdev);

#endif /* SIB_UDP_H */
