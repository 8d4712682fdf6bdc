package store

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Unavailable reports whether err means Redis cannot be reached or cannot serve now (down,
// unreachable, timing out, loading its data, failing over): the request may succeed if tried
// again shortly, as against an error of the request itself.
func Unavailable(err error) bool {
	if err == nil {
		return false
	}
	var netErr net.Error
	switch {
	case errors.Is(err, redis.ErrClosed), errors.Is(err, redis.ErrPoolTimeout), errors.Is(err, redis.ErrPoolExhausted),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, context.DeadlineExceeded),
		errors.As(err, &netErr):
		return true
	}
	busy := []string{"LOADING", "MASTERDOWN", "TRYAGAIN", "CLUSTERDOWN", "READONLY", "BUSY "}
	var rerr redis.Error
	if errors.As(err, &rerr) {
		for _, p := range busy {
			if strings.HasPrefix(rerr.Error(), p) {
				return true
			}
		}
	}
	// asynq passes Redis's errors on as text only ("UNKNOWN: redis eval error: LOADING ...",
	// "... redis eval error: dial unix ...: connect: connection refused").
	msg := err.Error()
	for _, p := range append(busy, "dial ") {
		if strings.Contains(msg, "redis eval error: "+p) || strings.Contains(msg, "redis command error: "+p) {
			return true
		}
	}
	return false
}
