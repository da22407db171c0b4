package main

import "os"

// DefaultCacheSize bounds OpenFGA's type-system and model caches when
// neither a flag nor the environment sizes them. OpenFGA keeps one type
// system per store and model, ~1.5 MiB for the core module, with a default
// bound of 100,000 entries and a 7-day TTL: over 14 GiB at 10,000
// organizations. At 1,000 the cache holds ~1.5 GiB at most; a store outside
// it has its type system rebuilt (~4 ms of CPU) on its next Check or Write.
// docs/authorization.md explains the trade; docs/benchmarks.md measures it.
const DefaultCacheSize = "1000"

// cacheSizeEnv are the environment variables of the two caches (OpenFGA's
// --datastore-max-typesystem-cache-size and --datastore-max-cache-size; a
// flag given on the command line still wins over them).
var cacheSizeEnv = []string{"OPENFGA_DATASTORE_MAX_TYPESYSTEM_CACHE_SIZE", "OPENFGA_DATASTORE_MAX_CACHE_SIZE"}

// boundCaches sets each cache's environment variable to DefaultCacheSize
// unless it is set.
func boundCaches() error {
	for _, env := range cacheSizeEnv {
		if _, ok := os.LookupEnv(env); ok {
			continue
		}
		if err := os.Setenv(env, DefaultCacheSize); err != nil {
			return err
		}
	}
	return nil
}
