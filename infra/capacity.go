package main

import (
	"fmt"
	"strconv"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// Lambda concurrency (docs/capacity.md has the arithmetic): every
// function reserves its own, so the API at its caps cannot take the
// alerting path's share, and AWS's unreserved minimum is left over.
const (
	// defaultAccountConcurrency is Lambda's default concurrency quota of
	// an account in a region (context accountConcurrency).
	defaultAccountConcurrency = 1000
	// unreservedMinimum is what AWS keeps unreserved: a reservation that
	// would leave less is refused at deploy.
	unreservedMinimum = 100
	// misdirectedReserved caps the global stack's one function, which
	// shares us-east-1 with VoiceOps-us: its 421 takes a few ms.
	misdirectedReserved = 10
)

// evaluatorNeeds is the concurrency the evaluator's sources may use at
// once: one invocation per rule shard message (the shard mapping's
// MaxConcurrency), streamLanes per metrics stream shard, and the
// scheduled run.
func evaluatorNeeds(f Function) int {
	n := 0
	if f.ShardFanout {
		n += voiceops.RuleShards
	}
	if f.MetricsStream {
		n += streamShardsBudget * streamParallelization
	}
	if f.Every != 0 {
		n++
	}
	return n
}

// streamShardsBudget is how many shards of the metrics table's stream the
// evaluator's reservation covers at streamParallelization each (a stream
// has about one shard per table partition). More shards than this are
// throttled, their records delayed, and the ones older than
// streamMaxRecordAge left to the schedule (its run every minute
// evaluates every rule).
const streamShardsBudget = 16

// concurrencyFromContext reads accountConcurrency and each function's
// reservedConcurrency.<name>, per region when given as key.<region>.
func concurrencyFromContext(c contextReader, region string) (int, map[string]int, error) {
	quota, err := parseCount(c.regional("accountConcurrency", region, strconv.Itoa(defaultAccountConcurrency)))
	if err != nil {
		return 0, nil, fmt.Errorf("context accountConcurrency: %w", err)
	}
	reserved := map[string]int{}
	for _, f := range Functions {
		key := "reservedConcurrency." + f.Name
		v := c.regional(key, region, "")
		if v == "" {
			continue
		}
		if reserved[f.Name], err = parseCount(v); err != nil {
			return 0, nil, fmt.Errorf("context %s: %w", key, err)
		}
	}
	return quota, reserved, nil
}

// checkReservations refuses reservations that AWS would refuse at deploy
// (more than the quota less the unreserved minimum, in sum) and those
// under what a function's own event sources start at once: the alerting
// path would throttle itself. others is what another stack reserves in
// the same AWS region (the global stack's function in us-east-1).
func checkReservations(cfg StackConfig, fns []Function, others int) error {
	sum := others
	for _, f := range fns {
		n := cfg.reserved(f)
		sum += n
		if n == 0 {
			continue
		}
		if f.Queue != nil && n < f.Queue.MaxConcurrency {
			return fmt.Errorf("region %s: function %s reserves %d, under its queue mapping's maximum concurrency %d", cfg.Region.Name, f.Name, n, f.Queue.MaxConcurrency)
		}
		if need := evaluatorNeeds(f); (f.ShardFanout || f.MetricsStream) && n < need {
			return fmt.Errorf("region %s: function %s reserves %d, under the %d its shard queue, stream and schedule start at once", cfg.Region.Name, f.Name, n, need)
		}
	}
	if limit := cfg.AccountConcurrency - unreservedMinimum; sum > limit {
		return fmt.Errorf("region %s: the functions reserve %d concurrent executions, over the %d that accountConcurrency %d leaves after AWS's unreserved minimum of %d",
			cfg.Region.Name, sum, limit, cfg.AccountConcurrency, unreservedMinimum)
	}
	return nil
}

// parseCount parses a positive whole number.
func parseCount(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%q is not a positive whole number", s)
	}
	return n, nil
}
