//go:build !unix

package fileio

import "errors"

// mkfifo makes a named pipe; there are none here.
func mkfifo(string) error { return errors.New("no named pipes") }
