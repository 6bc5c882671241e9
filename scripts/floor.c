/* floor.c: the kernel floor of a request/response round trip, written as
 * plainly as C allows: a server thread and a client thread in one process,
 * both pinned to CPU 0, ping-ponging 4 bytes with blocking read and write
 * over a fresh 127.0.0.1 TCP connection or Unix socket. Prints the p50 of
 * N round trips in ns. scripts/bench.sh builds it with the machine's
 * compiler and compares dbsock's floor target with it.
 *
 *   floor tcp|unix N
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static int listener;

static void pin0(void) {
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof set, &set) != 0) { perror("sched_setaffinity"); exit(1); }
}

static void full(int fd, char *b, int n, int rd) {
	for (int got = 0; got < n;) {
		ssize_t k = rd ? read(fd, b + got, n - got) : write(fd, b + got, n - got);
		if (k <= 0) { perror(rd ? "read" : "write"); exit(1); }
		got += (int)k;
	}
}

static void *serve(void *arg) {
	(void)arg;
	pin0();
	int c = accept(listener, NULL, NULL);
	if (c < 0) { perror("accept"); exit(1); }
	char b[4];
	for (;;) {
		ssize_t k = read(c, b, 4);
		if (k <= 0) break;
		full(c, b, (int)k, 0);
	}
	close(c);
	return NULL;
}

static int cmp(const void *a, const void *b) {
	long x = *(const long *)a, y = *(const long *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv) {
	if (argc != 3) { fprintf(stderr, "usage: floor tcp|unix N\n"); return 2; }
	int unixsock = strcmp(argv[1], "unix") == 0, n = atoi(argv[2]);
	pin0();
	struct sockaddr_storage ss;
	socklen_t len;
	memset(&ss, 0, sizeof ss);
	char path[64];
	if (unixsock) {
		struct sockaddr_un *u = (struct sockaddr_un *)&ss;
		snprintf(path, sizeof path, "/tmp/dbsock-floor-%d.sock", (int)getpid());
		unlink(path);
		u->sun_family = AF_UNIX;
		strcpy(u->sun_path, path);
		len = sizeof *u;
		listener = socket(AF_UNIX, SOCK_STREAM, 0);
	} else {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;
		in->sin_family = AF_INET;
		in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof *in;
		listener = socket(AF_INET, SOCK_STREAM, 0);
	}
	if (listener < 0 || bind(listener, (struct sockaddr *)&ss, len) != 0 || listen(listener, 1) != 0) { perror("listen"); return 1; }
	if (getsockname(listener, (struct sockaddr *)&ss, &len) != 0) { perror("getsockname"); return 1; }
	pthread_t t;
	pthread_create(&t, NULL, serve, NULL);
	int c = socket(unixsock ? AF_UNIX : AF_INET, SOCK_STREAM, 0);
	if (connect(c, (struct sockaddr *)&ss, len) != 0) { perror("connect"); return 1; }
	if (!unixsock) { int one = 1; setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one); }
	long *lat = malloc(sizeof(long) * n);
	char b[4] = "ping";
	for (int i = 0; i < n; i++) {
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		full(c, b, 4, 0);
		full(c, b, 4, 1);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		lat[i] = (t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec);
	}
	close(c);
	pthread_join(t, NULL);
	if (unixsock) unlink(path);
	qsort(lat, n, sizeof *lat, cmp);
	printf("%ld\n", lat[n / 2]);
	return 0;
}
