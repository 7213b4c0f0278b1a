// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Probe: setup_udp_tunnel_sock() and udp_tunnel_sock_release() take
 * the struct sock of the tunnel's socket, not its struct socket (after
 * 6.12, by 7.2).
 */
#include <net/udp_tunnel.h>

void sib_probe_udp_tunnel_sock_sk(struct net *net, struct sock *sk,
				  struct udp_tunnel_sock_cfg *cfg);
void sib_probe_udp_tunnel_sock_sk(struct net *net, struct sock *sk,
				  struct udp_tunnel_sock_cfg *cfg)
{
	setup_udp_tunnel_sock(net, sk, cfg);
	udp_tunnel_sock_release(sk);
}
