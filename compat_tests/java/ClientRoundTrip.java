// One round trip of Kafka's Java clients, for any clients version (3.x or 4.x): the admin client
// creates a topic, an idempotent acks=all producer writes COUNT records, a subscribe() consumer in a
// group reads them all and commits, the admin client reads the committed offsets back, and a
// transactional producer commits one more record that a read_committed consumer then sees.
//
// Run as a single-file program (Java 11+): java -cp "<clients jars>/*" ClientRoundTrip.java
//     BOOTSTRAP TOPIC GROUP COUNT
// Prints "key=value" lines: the clients version, then what each step saw.
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public class ClientRoundTrip {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String topic = args[1];
        String group = args[2];
        int count = Integer.parseInt(args[3]);
        // The clients' own version file (AppInfoParser, which reads it, moved package in 4.4).
        Properties version = new Properties();
        try (java.io.InputStream in = KafkaProducer.class.getClassLoader()
                .getResourceAsStream("kafka/kafka-version.properties")) {
            version.load(in);
        }
        System.out.println("version=" + version.getProperty("version"));

        Properties common = new Properties();
        common.put("bootstrap.servers", bootstrap);
        try (Admin admin = Admin.create(common)) {
            admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1))).all().get(60, TimeUnit.SECONDS);
        }

        Properties p = new Properties();
        p.putAll(common);
        p.put("acks", "all");
        p.put("enable.idempotence", "true");
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            for (int i = 0; i < count; i++) {
                producer.send(new ProducerRecord<>(topic, "k-" + i, "v-" + i)).get(60, TimeUnit.SECONDS);
            }
        }
        System.out.println("produced=" + count);

        Properties c = new Properties();
        c.putAll(common);
        c.put("group.id", group);
        c.put("auto.offset.reset", "earliest");
        c.put("enable.auto.commit", "false");
        c.put("key.deserializer", StringDeserializer.class.getName());
        c.put("value.deserializer", StringDeserializer.class.getName());
        int seen = 0;
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c)) {
            consumer.subscribe(List.of(topic));
            long deadline = System.currentTimeMillis() + 90_000;
            while (seen < count && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
                    if (!r.value().equals("v-" + r.key().substring(2))) {
                        throw new IllegalStateException("record " + r + " does not match its key");
                    }
                    seen++;
                }
            }
            consumer.commitSync();
        }
        System.out.println("consumed=" + seen);

        try (Admin admin = Admin.create(common)) {
            Map<TopicPartition, OffsetAndMetadata> committed =
                    admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(60, TimeUnit.SECONDS);
            long total = 0;
            for (OffsetAndMetadata offset : committed.values()) {
                total += offset.offset();
            }
            System.out.println("committed=" + total);
        }

        Properties t = new Properties();
        t.putAll(p);
        t.put("transactional.id", group + "-txn");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(t)) {
            producer.initTransactions();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(topic, 0, "k-txn", "v-txn"));
            producer.commitTransaction();
        }
        Properties rc = new Properties();
        rc.putAll(c);
        rc.put("group.id", group + "-rc");
        rc.put("isolation.level", "read_committed");
        int committedRead = 0;
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(rc)) {
            consumer.assign(List.of(new TopicPartition(topic, 0)));
            consumer.seekToBeginning(Collections.emptyList());
            long deadline = System.currentTimeMillis() + 90_000;
            boolean found = false;
            while (!found && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
                    committedRead++;
                    found |= r.key().equals("k-txn");
                }
            }
            System.out.println("transaction_seen=" + found);
        }
    }
}
