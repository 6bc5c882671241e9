/*
 * The C agent's back end for dbsock's own ping-pong servers (floor, echo):
 * libc's socket calls, blocking, as a C program would make them. Each op
 * writes the message and reads it back: one write and one read for the
 * floor's 4 bytes. At open, before any op, the connection says its token
 * in a hello frame (docs/agents.md) and reports the number the server
 * gives it.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <gnu/libc-version.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "agent.h"

/* CHUNK is the most an op writes before it reads back: a larger message
 * is sent chunk by chunk, so that neither side blocks on a full buffer. */
#define CHUNK (32 << 10)

struct pp {
	int fd;
	char out[CHUNK], in[CHUNK];
};

const char *libc_version(void) { return gnu_get_libc_version(); }

static int write_all(int fd, const char *b, size_t n) {
	while (n > 0) {
		ssize_t w = write(fd, b, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		b += w, n -= (size_t)w;
	}
	return 0;
}

/* read_full reads n bytes: 0, or -1 with errno set (0 at end of stream). */
static int read_full(int fd, char *b, size_t n) {
	while (n > 0) {
		ssize_t r = read(fd, b, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r == 0)
				errno = 0;
			return -1;
		}
		b += r, n -= (size_t)r;
	}
	return 0;
}

static const char *why(void) { return errno ? strerror(errno) : "the server closed the connection"; }

/* read_frame reads one of the server's frames: a length byte and text. */
static int read_frame(int fd, char *text) {
	unsigned char n;
	if (read_full(fd, (char *)&n, 1) || read_full(fd, text, n))
		return -1;
	text[n] = 0;
	return 0;
}

static int dial(json_t *m, char *err, size_t errlen) {
	const char *net = json_string_value(json_object_get(m, "network"));
	int fd;
	if (net && strcmp(net, "unix") == 0) {
		struct sockaddr_un a = {.sun_family = AF_UNIX};
		const char *path = json_string_value(json_object_get(m, "socket"));
		if (!path || strlen(path) >= sizeof a.sun_path) {
			snprintf(err, errlen, "no socket path, or one over %zu bytes", sizeof a.sun_path - 1);
			return -1;
		}
		strcpy(a.sun_path, path);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0)
			return fd;
		snprintf(err, errlen, "connect to %s: %s", path, strerror(errno));
	} else {
		char port[16];
		const char *host = json_string_value(json_object_get(m, "host"));
		snprintf(port, sizeof port, "%" JSON_INTEGER_FORMAT, json_integer_value(json_object_get(m, "port")));
		struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV}, *ai;
		int rc = getaddrinfo(host ? host : "", port, &hints, &ai);
		if (rc) {
			snprintf(err, errlen, "address %s port %s: %s", host ? host : "", port, gai_strerror(rc));
			return -1;
		}
		fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		int one = 1;
		if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
		    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) == 0) {
			freeaddrinfo(ai);
			return fd;
		}
		snprintf(err, errlen, "connect to %s port %s: %s", host, port, strerror(errno));
		freeaddrinfo(ai);
	}
	if (fd >= 0)
		close(fd);
	return -1;
}

/* local_addr is the connection's own IP:PORT over TCP ("" on the socket). */
static void local_addr(int fd, char *out, size_t n) {
	struct sockaddr_storage a;
	socklen_t len = sizeof a;
	char ip[INET6_ADDRSTRLEN];
	out[0] = 0;
	if (getsockname(fd, (struct sockaddr *)&a, &len))
		return;
	if (a.ss_family == AF_INET) {
		struct sockaddr_in *s = (struct sockaddr_in *)&a;
		inet_ntop(AF_INET, &s->sin_addr, ip, sizeof ip);
		snprintf(out, n, "%s:%d", ip, ntohs(s->sin_port));
	} else if (a.ss_family == AF_INET6) {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)&a;
		inet_ntop(AF_INET6, &s->sin6_addr, ip, sizeof ip);
		snprintf(out, n, "[%s]:%d", ip, ntohs(s->sin6_port));
	}
}

void *pp_open(json_t *m, json_t *reply, char *err, size_t errlen) {
	const char *token = json_string_value(json_object_get(m, "token"));
	char text[256 + 8], frame[2 + 255];
	if (json_string_value(json_object_get(m, "tls_ca_pem"))) {
		snprintf(err, errlen, "dbsock's own servers have no TLS");
		return NULL;
	}
	if (!token || strlen(token) > 200) {
		snprintf(err, errlen, "no token, or one over 200 bytes");
		return NULL;
	}
	int fd = dial(m, err, errlen);
	if (fd < 0)
		return NULL;
	/* No SO_RCVTIMEO or SO_SNDTIMEO: a blocking call with a timeout arms a
	 * kernel timer on every op (0.6 us of a 10 us Unix round trip on an AMD
	 * EPYC guest), which a plain C ping-pong does not pay and the kernel's
	 * floor must not include. A server that stops answering is bounded by
	 * dbsock, which stops an agent whose block is late (op_timeout_ms plus
	 * its grace). */
	/* The server's greeting, then the hello that names the token, answered
	 * with "ok ID": untimed, before any op (no hello with an empty token:
	 * a connect scenario's op opens unnamed). */
	if (read_frame(fd, text)) {
		snprintf(err, errlen, "greeting: %s", why());
		close(fd);
		return NULL;
	}
	if (*token) {
		int n = snprintf(frame + 2, sizeof frame - 2, "hello %s", token);
		frame[0] = 0, frame[1] = (char)n;
		if (write_all(fd, frame, 2 + (size_t)n) || read_frame(fd, text)) {
			snprintf(err, errlen, "hello: %s", why());
			close(fd);
			return NULL;
		}
		if (strncmp(text, "ok ", 3) != 0) {
			snprintf(err, errlen, "the server answered the hello with %s", text);
			close(fd);
			return NULL;
		}
		json_object_set_new(reply, "conn_id", json_integer(strtoll(text + 3, NULL, 10)));
	}
	local_addr(fd, text, sizeof text);
	if (text[0])
		json_object_set_new(reply, "local_addr", json_string(text));
	struct pp *c = calloc(1, sizeof *c);
	c->fd = fd;
	memcpy(c->out, "ping", 4);
	return c;
}

/* pp_op writes a message of key bytes ("ping" first) and reads it back. */
int pp_op(void *conn, json_t *key, long *len, char *err, size_t errlen) {
	struct pp *c = conn;
	long n = (long)json_integer_value(key);
	for (long done = 0; done < n;) {
		size_t k = n - done < CHUNK ? (size_t)(n - done) : CHUNK;
		if (write_all(c->fd, c->out, k) || read_full(c->fd, c->in, k)) {
			snprintf(err, errlen, "%s after %ld of %ld bytes", why(), done, n);
			return -1;
		}
		done += (long)k;
	}
	if (n > 0 && c->in[0] != 'p') {
		snprintf(err, errlen, "the server echoed other bytes than it was sent");
		return -1;
	}
	*len = n;
	return 0;
}

void pp_close(void *conn) {
	struct pp *c = conn;
	close(c->fd);
	free(c);
}
