//go:build race

package main

// Under -race (scripts/test.sh), opsctl is built with it too, so that its
// packages come from the cache the race-enabled test builds filled.
func init() { opsctlBuildFlags = []string{"-race"} }
