package main

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/voiceops/opsapi/shared/platform/keys"
	"github.com/voiceops/opsapi/shared/testsupport/awstest"
)

// A restart with the last run's credentials file (a fresh moto: new
// tables, a newly generated internal key secret) keeps every account, key
// and the internal key; without the file every key is new.
func TestSeedKeepsThePreviousCredentials(t *testing.T) {
	cfg, endpoint := awstest.Config(t)
	ctx := context.Background()
	db := awstest.DynamoDB(t)
	sm := secretsmanager.NewFromConfig(cfg, func(o *secretsmanager.Options) { o.BaseEndpoint = aws.String(endpoint) })
	secret := func() string {
		name := fmt.Sprintf("internal-%d", time.Now().UnixNano())
		out, err := sm.CreateSecret(ctx, &secretsmanager.CreateSecretInput{Name: &name, SecretString: aws.String("generated-" + name)})
		if err != nil {
			t.Fatal(err)
		}
		return aws.ToString(out.ARN)
	}
	first, err := seedAccounts(ctx, db, awstest.Tables(t, db), "us", secret(), sm, nil)
	if err != nil {
		t.Fatal(err)
	}
	second, err := seedAccounts(ctx, db, awstest.Tables(t, db), "us", secret(), sm, &first)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(first, second) {
		t.Fatalf("a restart with the file changed the credentials:\n%+v\n%+v", first, second)
	}
	names := awstest.Tables(t, db)
	third, err := seedAccounts(ctx, db, names, "us", secret(), sm, nil)
	if err != nil {
		t.Fatal(err)
	}
	if third.InternalKey == first.InternalKey || third.Accounts[0].APIKey == first.Accounts[0].APIKey {
		t.Error("-fresh (no previous file) kept old keys")
	}
	if _, err := keys.Parse(third.Accounts[0].Projects[0].APIKey); err != nil {
		t.Errorf("a new key does not parse: %v", err)
	}
}
