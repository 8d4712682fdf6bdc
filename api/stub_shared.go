package api

import "errors"

var errNotImplemented = errors.New("not implemented") // removed when every stub is gone
