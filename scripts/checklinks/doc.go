// Package checklinks holds the import rules: each Lambda function
// (functions/<name>) links only the packages of what its handler runs, and
// no package of shared/ imports one that stands above it (layers_test.go). A function's bundle is
// its Go binary, so a group package that also serves another function's
// routes drags that function's engine into it (functions/outbound, near its
// 16 MiB cap, used to link the conversation engine, agents and hooks through
// the former shared/baseapi, which held every base-host group). The rules are in checklinks_test.go; `go test ./...` runs
// them (one `go list` call, about two seconds).
package checklinks
