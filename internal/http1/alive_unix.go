//go:build unix

package http1

import (
	"errors"
	"syscall"
)

// alive says whether c's server has not closed it (nor sent anything unasked, which leaves it
// out of step) while it was idle: one non-blocking peek at its socket.
func alive(c *conn) bool {
	sc, ok := c.raw.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	ok = false
	var b [1]byte
	err = rc.Read(func(fd uintptr) bool {
		n, _, rerr := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		ok = n < 0 && (errors.Is(rerr, syscall.EAGAIN) || errors.Is(rerr, syscall.EWOULDBLOCK))
		return true // done either way: never wait for the socket to become readable
	})
	return err == nil && ok
}
