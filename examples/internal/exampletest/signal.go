package exampletest

import "syscall"

// sigZero probes whether a process exists.
var sigZero = syscall.Signal(0)
