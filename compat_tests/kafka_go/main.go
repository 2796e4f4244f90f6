// Command kafka_go produces records to a partition with segmentio/kafka-go's Client and reads them
// back with Client.Fetch, which sends a sessionless fetch (session id -1, epoch -1).
//
// Usage: go run . <host:port> <topic>; prints each fetched value on a line of its own.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/segmentio/kafka-go"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: kafka_go <host:port> <topic>")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "kafka_go:", err)
		os.Exit(1)
	}
}

func run(addr, topic string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client := &kafka.Client{Addr: kafka.TCP(addr), Timeout: 30 * time.Second}
	produced, err := client.Produce(ctx, &kafka.ProduceRequest{
		Topic:        topic,
		Partition:    0,
		RequiredAcks: kafka.RequireAll,
		Records: kafka.NewRecordReader(
			kafka.Record{Value: kafka.NewBytes([]byte("one"))},
			kafka.Record{Value: kafka.NewBytes([]byte("two"))},
			kafka.Record{Value: kafka.NewBytes([]byte("three"))},
		),
	})
	if err != nil {
		return fmt.Errorf("produce: %w", err)
	}
	if produced.Error != nil {
		return fmt.Errorf("produce: %w", produced.Error)
	}
	fetched, err := client.Fetch(ctx, &kafka.FetchRequest{
		Topic: topic, Partition: 0, Offset: produced.BaseOffset, MinBytes: 1, MaxBytes: 1 << 20,
		MaxWait: 100 * time.Millisecond,
	})
	if err != nil {
		return fmt.Errorf("fetch: %w", err)
	}
	if fetched.Error != nil {
		return fmt.Errorf("fetch: %w", fetched.Error)
	}
	for {
		record, err := fetched.Records.ReadRecord()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read record: %w", err)
		}
		value, err := io.ReadAll(record.Value)
		if err != nil {
			return fmt.Errorf("read value: %w", err)
		}
		fmt.Println(string(value))
	}
}
