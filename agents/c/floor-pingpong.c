/*
 * floor-pingpong: the reference C blocking ping-pong against dbsock's
 * floor server, the figure the C agent's floor is compared with
 * (scripts/stability.sh, section 8).
 *
 *   floor-pingpong HOST:PORT SOCKET OPS [BLOCK]
 *
 * Opens one connection over TCP and one over the Unix socket, reads each
 * greeting, does 1000 untimed ping-pongs on each, then alternates blocks
 * of BLOCK (default 1000) timed ping-pongs between them until each has
 * done OPS: a blocking write of 4 bytes and blocking reads until the 4
 * bytes are back, timed on CLOCK_MONOTONIC. Prints "tcp P50 MEAN" and
 * "unix P50 MEAN", in nanoseconds.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void die(const char *what) {
	fprintf(stderr, "floor-pingpong: %s: %s\n", what, errno ? strerror(errno) : "the server closed the connection");
	exit(1);
}

static void read_full(int fd, char *b, size_t n) {
	while (n > 0) {
		ssize_t r = read(fd, b, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r == 0)
				errno = 0;
			die("read");
		}
		b += r, n -= (size_t)r;
	}
}

static void ping(int fd) {
	char in[4];
	for (;;) {
		ssize_t w = write(fd, "ping", 4);
		if (w == 4)
			break;
		if (!(w < 0 && errno == EINTR))
			die("write");
	}
	read_full(fd, in, 4);
}

static int dial_tcp(const char *hostport) {
	char host[64];
	const char *colon = strrchr(hostport, ':');
	struct sockaddr_in a = {.sin_family = AF_INET};
	if (!colon || colon - hostport >= (long)sizeof host) {
		fprintf(stderr, "floor-pingpong: %s is not IPv4-HOST:PORT\n", hostport);
		exit(2);
	}
	snprintf(host, sizeof host, "%.*s", (int)(colon - hostport), hostport);
	a.sin_port = htons((uint16_t)atoi(colon + 1));
	if (inet_pton(AF_INET, host, &a.sin_addr) != 1) {
		fprintf(stderr, "floor-pingpong: %s is not IPv4-HOST:PORT\n", hostport);
		exit(2);
	}
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) || setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one))
		die(hostport);
	return fd;
}

static int dial_unix(const char *path) {
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof a.sun_path) {
		fprintf(stderr, "floor-pingpong: socket path %s is too long\n", path);
		exit(2);
	}
	strcpy(a.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a))
		die(path);
	return fd;
}

/* greeting reads the floor server's greeting: a length byte and text. */
static void greeting(int fd) {
	unsigned char n;
	char text[256];
	read_full(fd, (char *)&n, 1);
	read_full(fd, text, n);
}

static int cmp(const void *a, const void *b) {
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static void report(const char *path, int64_t *ns, long n) {
	double sum = 0;
	for (long i = 0; i < n; i++)
		sum += (double)ns[i];
	qsort(ns, (size_t)n, sizeof *ns, cmp);
	printf("%s %lld %.0f\n", path, (long long)ns[n / 2], sum / (double)n);
}

int main(int argc, char **argv) {
	if (argc < 4 || argc > 5 || atol(argv[3]) < 1 || (argc == 5 && atol(argv[4]) < 1)) {
		fprintf(stderr, "usage: floor-pingpong HOST:PORT SOCKET OPS [BLOCK]\n");
		return 2;
	}
	long ops = atol(argv[3]), block = argc == 5 ? atol(argv[4]) : 1000;
	int fds[2] = {dial_tcp(argv[1]), dial_unix(argv[2])};
	int64_t *ns[2] = {calloc((size_t)ops, sizeof(int64_t)), calloc((size_t)ops, sizeof(int64_t))};
	long done[2] = {0, 0};
	for (int p = 0; p < 2; p++) {
		greeting(fds[p]);
		for (int i = 0; i < 1000; i++)
			ping(fds[p]);
	}
	for (int p = 0; done[0] < ops || done[1] < ops; p ^= 1) {
		for (long i = 0; i < block && done[p] < ops; i++) {
			int64_t t0 = now_ns();
			ping(fds[p]);
			ns[p][done[p]++] = now_ns() - t0;
		}
	}
	report("tcp", ns[0], ops);
	report("unix", ns[1], ops);
	return 0;
}
