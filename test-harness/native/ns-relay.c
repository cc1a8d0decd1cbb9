/*
 * ns-relay: lets processes inside a network namespace reach a TCP service on
 * the root namespace's loopback (the lab's management server).
 *
 * A namespace cannot route to another namespace's 127.0.0.1, and the lab must
 * not add interfaces or routes to the root namespace. So this relay, started in
 * the root namespace, enters the lab namespace just long enough to create its
 * listening socket there (a socket keeps the namespace it was created in),
 * returns, and forwards every accepted connection to TARGET in the root
 * namespace. Nothing is added to either namespace's interfaces or routes.
 *
 * usage: ns-relay NETNS_PATH LISTEN_ADDR LISTEN_PORT TARGET_ADDR TARGET_PORT
 *   e.g. ns-relay /run/netns/tn-lab-1a2b3c-site-a 127.0.0.1 4100 127.0.0.1 4100
 *
 * One child process per connection; children die with the relay
 * (PR_SET_PDEATHSIG), so stopping the relay cuts every connection through it:
 * that is how the lab disconnects one device from the server.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

static int parse_addr(const char *addr, const char *port, struct sockaddr_in *sa) {
  memset(sa, 0, sizeof *sa);
  sa->sin_family = AF_INET;
  long p = strtol(port, NULL, 10);
  if (p <= 0 || p > 65535 || inet_pton(AF_INET, addr, &sa->sin_addr) != 1) return -1;
  sa->sin_port = htons((unsigned short)p);
  return 0;
}

/* Copies both ways until both sides have closed; half-closes are passed on. */
static void pump(int a, int b) {
  static char buf[65536];
  struct pollfd p[2] = {{a, POLLIN, 0}, {b, POLLIN, 0}};
  int open_in[2] = {1, 1};
  while (open_in[0] || open_in[1]) {
    if (poll(p, 2, -1) < 0) { if (errno == EINTR) continue; return; }
    for (int i = 0; i < 2; i++) {
      if (!open_in[i] || !(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = read(p[i].fd, buf, sizeof buf);
      if (n <= 0) {
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return; /* reset: drop both sides */
        open_in[i] = 0;
        p[i].fd = -1;
        shutdown(i == 0 ? b : a, SHUT_WR);
        continue;
      }
      for (ssize_t off = 0; off < n;) {
        ssize_t w = write(i == 0 ? b : a, buf + off, (size_t)(n - off));
        if (w < 0) { if (errno == EINTR) continue; return; }
        off += w;
      }
    }
  }
}

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: %s NETNS_PATH LISTEN_ADDR LISTEN_PORT TARGET_ADDR TARGET_PORT\n", argv[0]);
    return 2;
  }
  struct sockaddr_in listen_sa, target_sa;
  if (parse_addr(argv[2], argv[3], &listen_sa) || parse_addr(argv[4], argv[5], &target_sa)) {
    fprintf(stderr, "ns-relay: bad address or port\n");
    return 2;
  }
  int home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
  int there = open(argv[1], O_RDONLY | O_CLOEXEC);
  if (home < 0 || there < 0) { perror("ns-relay: open netns"); return 1; }
  if (setns(there, CLONE_NEWNET) != 0) { perror("ns-relay: setns"); return 1; }
  int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (ls < 0 || bind(ls, (struct sockaddr *)&listen_sa, sizeof listen_sa) != 0 || listen(ls, 64) != 0) {
    perror("ns-relay: listen");
    return 1;
  }
  if (setns(home, CLONE_NEWNET) != 0) { perror("ns-relay: setns back"); return 1; }
  close(there);
  close(home);
  signal(SIGCHLD, SIG_IGN); /* children are reaped by the kernel */
  fprintf(stderr, "ns-relay: %s %s:%s -> %s:%s\n", argv[1], argv[2], argv[3], argv[4], argv[5]);

  for (;;) {
    int c = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
    if (c < 0) { if (errno == EINTR || errno == ECONNABORTED) continue; perror("ns-relay: accept"); return 1; }
    pid_t pid = fork();
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() == 1) _exit(0); /* the relay died between fork and prctl */
      close(ls);
      int t = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (t < 0 || connect(t, (struct sockaddr *)&target_sa, sizeof target_sa) != 0) _exit(1);
      setsockopt(t, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      pump(c, t);
      _exit(0);
    }
    close(c);
  }
}
