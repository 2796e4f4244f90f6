// One member of a consumer group on the KIP-848 protocol (group.protocol=consumer): it subscribes to
// a topic (or to a regular expression), prints each rebalance and each record, and commits what it
// printed after every poll (and before giving partitions up).  It leaves the group when its stdin
// closes; a test that kills it with SIGKILL makes it a crashed member.
//
// Run as a single-file program: java -cp "<kafka jars>/*" ConsumerProtocolMember.java
//     BOOTSTRAP GROUP (topic:NAME | pattern:REGEX) [key=value client settings...]
// Prints lines: "assigned P,P,..." / "revoked P,P,..." (topic-partition lists), "record T P OFFSET VALUE",
// "committed", "closed".
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Properties;
import java.util.stream.Collectors;

import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.SubscriptionPattern;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.StringDeserializer;

public class ConsumerProtocolMember {
    private static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    private static String names(Collection<TopicPartition> partitions) {
        return partitions.stream().map(tp -> tp.topic() + "-" + tp.partition()).sorted()
            .collect(Collectors.joining(","));
    }

    public static void main(String[] args) throws Exception {
        Properties p = new Properties();
        p.put("bootstrap.servers", args[0]);
        p.put("group.id", args[1]);
        p.put("group.protocol", "consumer");
        p.put("enable.auto.commit", "false");
        p.put("auto.offset.reset", "earliest");
        p.put("key.deserializer", StringDeserializer.class.getName());
        p.put("value.deserializer", StringDeserializer.class.getName());
        for (int i = 3; i < args.length; i++) {
            String[] kv = args[i].split("=", 2);
            p.put(kv[0], kv[1]);
        }
        KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p);
        Thread main = Thread.currentThread();
        Thread stdin = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in))) {
                while (in.readLine() != null) { }
            } catch (Exception e) {
                // stdin gone either way
            }
            consumer.wakeup();
        });
        stdin.setDaemon(true);
        stdin.start();
        ConsumerRebalanceListener listener = new ConsumerRebalanceListener() {
            public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                if (!partitions.isEmpty()) {
                    consumer.commitSync();
                    say("revoked " + names(partitions));
                }
            }

            public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                say("assigned " + names(partitions));
            }
        };
        String what = args[2];
        if (what.startsWith("pattern:")) {
            consumer.subscribe(new SubscriptionPattern(what.substring("pattern:".length())), listener);
        } else {
            consumer.subscribe(List.of(what.substring("topic:".length())), listener);
        }
        try {
            while (true) {
                var records = consumer.poll(Duration.ofMillis(200));
                for (ConsumerRecord<String, String> r : records) {
                    say("record " + r.topic() + " " + r.partition() + " " + r.offset() + " " + r.value());
                }
                if (!records.isEmpty()) {
                    consumer.commitSync();
                    say("committed");
                }
            }
        } catch (WakeupException e) {
            // stdin closed: leave the group
        } finally {
            consumer.close();
            say("closed");
        }
    }
}
