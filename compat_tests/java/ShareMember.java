// A share-group member (KIP-932) on the Java KafkaShareConsumer: the counterpart of
// rdkafka_share_member.py, with the same arguments and output lines.
//
// Run as a single-file program: java -cp "<kafka jars>/*" ShareMember.java
//     BOOTSTRAP GROUP TOPIC (ack | hold | renew) [key=value client settings...]
// ack: each record is acknowledged explicitly by its value (release... RELEASE, reject... REJECT, else
// ACCEPT) and the acknowledgements are committed after each poll.  hold: the records of the first
// poll that brings any are printed and held, never acknowledged, until the process is killed.
// renew (Java only, KIP-1222): records are renewed (RENEW, committed: "renewed") and polled again, half
// a second apart, ten times, then accepted as in ack.
// Prints lines: "record T P OFFSET DELIVERY_COUNT VALUE", "committed" (every acknowledgement of the
// poll taken) or "commit failed", "holding", "closed".
// Closing stdin closes the consumer (it leaves the group).
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Properties;

import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.StringDeserializer;

public class ShareMember {
    private static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    private static AcknowledgeType ackType(String value) {
        if (value.startsWith("release")) return AcknowledgeType.RELEASE;
        if (value.startsWith("reject")) return AcknowledgeType.REJECT;
        return AcknowledgeType.ACCEPT;
    }

    public static void main(String[] args) throws Exception {
        Properties p = new Properties();
        p.put("bootstrap.servers", args[0]);
        p.put("group.id", args[1]);
        p.put("share.acknowledgement.mode", "explicit");
        p.put("key.deserializer", StringDeserializer.class.getName());
        p.put("value.deserializer", StringDeserializer.class.getName());
        String topic = args[2];
        boolean hold = args[3].equals("hold");
        boolean renew = args[3].equals("renew");
        int renewals = 0;
        for (int i = 4; i < args.length; i++) {
            String[] kv = args[i].split("=", 2);
            p.put(kv[0], kv[1]);
        }
        KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(p);
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
        consumer.subscribe(List.of(topic));
        try {
            while (true) {
                ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(500));
                for (ConsumerRecord<String, String> r : records) {
                    say("record " + r.topic() + " " + r.partition() + " " + r.offset() + " "
                        + r.deliveryCount().orElse((short) -1) + " " + r.value());
                }
                if (renew && !records.isEmpty() && renewals < 10) {
                    // A renewed record comes back with the next poll, still held by this member.
                    for (ConsumerRecord<String, String> r : records) {
                        consumer.acknowledge(r, AcknowledgeType.RENEW);
                    }
                    boolean failed = consumer.commitSync().values().stream().anyMatch(Optional::isPresent);
                    say(failed ? "renew failed" : "renewed");
                    renewals++;
                    Thread.sleep(500);
                    continue;
                }
                if (hold && !records.isEmpty()) {
                    say("holding");
                    Thread.sleep(Long.MAX_VALUE);
                }
                if (!records.isEmpty()) {
                    for (ConsumerRecord<String, String> r : records) {
                        consumer.acknowledge(r, ackType(r.value()));
                    }
                    boolean failed = consumer.commitSync().values().stream().anyMatch(Optional::isPresent);
                    say(failed ? "commit failed" : "committed");
                }
            }
        } catch (WakeupException e) {
            // stdin closed: leave
        }
        consumer.close();
        say("closed");
    }
}
