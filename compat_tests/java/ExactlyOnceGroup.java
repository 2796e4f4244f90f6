// One member of a consume-transform-produce group with the Java clients: a KafkaConsumer
// (read_committed, no auto commit) and its own transactional KafkaProducer, which copies what the
// consumer polled to the output topic and commits the consumed offsets in the same transaction
// (sendOffsetsToTransaction with the consumer's group metadata: TxnOffsetCommit).
//
// Run as a single-file program (Java 11+): java -cp "<kafka jars>/*" ExactlyOnceGroup.java
//     BOOTSTRAP INPUT OUTPUT GROUP STRATEGY STATIC(true|false) NAME
// STRATEGY is range or cooperative-sticky; the producer's transactional.id is GROUP-NAME, and
// NAME is the group.instance.id when STATIC.  It reads commands on stdin, one a line:
//     stop    finish the transaction, close the consumer (leaving the group) and the producer
//     crash   halt the JVM in the middle of the next transaction (offsets sent, not committed)
// and prints one line per event on stdout:
//     STARTED NAME / ASSIGNED NAME p,p,.. / REVOKED NAME p,.. / STOPPED NAME / CRASHING NAME
//     COMMITTED NAME COUNT      after a commitTransaction() that succeeded, with its record count
//     ABORTED NAME EXCEPTION    a transaction aborted after an abortable error; the member rewinds
//     FATAL NAME EXCEPTION      an error that ends the member (ProducerFenced, ...)
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.stream.Collectors;

import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public class ExactlyOnceGroup {
    static String bootstrap, input, output, group, strategy;
    static boolean isStatic;

    static synchronized void emit(String line) {
        System.out.println(line);
        System.out.flush();
    }

    static String parts(Collection<TopicPartition> tps) {
        return tps.stream().map(tp -> Integer.toString(tp.partition())).sorted().collect(Collectors.joining(","));
    }

    static class Member extends Thread {
        final String name;
        volatile boolean running = true;
        volatile boolean crash = false;

        Member(String name) {
            super("member-" + name);
            this.name = name;
        }

        @Override
        public void run() {
            Properties c = new Properties();
            c.put("bootstrap.servers", bootstrap);
            c.put("group.id", group);
            c.put("client.id", "consumer-" + name);
            c.put("isolation.level", "read_committed");
            c.put("enable.auto.commit", "false");
            c.put("auto.offset.reset", "earliest");
            c.put("max.poll.records", "50");
            // The broker's lowest allowed (group.min.session.timeout.ms): a crashed member, or a
            // static one that stopped (it sends no LeaveGroup), is given up on after 6 s.
            c.put("session.timeout.ms", "6000");
            c.put("heartbeat.interval.ms", "1000");
            c.put("partition.assignment.strategy", strategy.equals("range")
                    ? "org.apache.kafka.clients.consumer.RangeAssignor"
                    : "org.apache.kafka.clients.consumer.CooperativeStickyAssignor");
            if (isStatic) c.put("group.instance.id", name);
            c.put("key.deserializer", ByteArrayDeserializer.class.getName());
            c.put("value.deserializer", ByteArrayDeserializer.class.getName());
            Properties p = new Properties();
            p.put("bootstrap.servers", bootstrap);
            p.put("client.id", "producer-" + name);
            p.put("transactional.id", group + "-" + name);
            p.put("transaction.timeout.ms", "60000");
            // One record a batch, so a transaction sends several requests to one partition at once
            // (up to max.in.flight.requests.per.connection), right as the previous one completes.
            p.put("batch.size", "0");
            p.put("linger.ms", "0");
            p.put("key.serializer", ByteArraySerializer.class.getName());
            p.put("value.serializer", ByteArraySerializer.class.getName());
            try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(c);
                 KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
                producer.initTransactions();
                consumer.subscribe(List.of(input), new ConsumerRebalanceListener() {
                    public void onPartitionsRevoked(Collection<TopicPartition> tps) {
                        emit("REVOKED " + name + " " + parts(tps));
                    }

                    public void onPartitionsAssigned(Collection<TopicPartition> tps) {
                        emit("ASSIGNED " + name + " " + parts(consumer.assignment()));
                    }
                });
                emit("STARTED " + name);
                while (running) {
                    ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(200));
                    if (records.isEmpty()) continue;
                    producer.beginTransaction();
                    try {
                        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                        for (ConsumerRecord<byte[], byte[]> r : records) {
                            producer.send(new ProducerRecord<>(output, r.key(), r.value()));
                            offsets.put(new TopicPartition(r.topic(), r.partition()),
                                    new OffsetAndMetadata(r.offset() + 1));
                        }
                        producer.sendOffsetsToTransaction(offsets, consumer.groupMetadata());
                        if (crash) {
                            producer.flush();
                            emit("CRASHING " + name);
                            Runtime.getRuntime().halt(1);
                        }
                        producer.commitTransaction();
                        emit("COMMITTED " + name + " " + records.count());
                    } catch (ProducerFencedException | OutOfOrderSequenceException | AuthorizationException
                             | UnsupportedVersionException | InvalidProducerEpochException e) {
                        throw e;
                    } catch (KafkaException e) {
                        // CommitFailedException (the generation moved on), a timeout, ...: abort and
                        // go back to the last committed offsets so nothing is lost or copied twice.
                        emit("ABORTED " + name + " " + e);
                        producer.abortTransaction();
                        rewind(consumer);
                    }
                }
            } catch (Throwable e) {
                emit("FATAL " + name + " " + e);
                StringBuilder trace = new StringBuilder();
                for (StackTraceElement el : e.getStackTrace()) trace.append("    at ").append(el).append('\n');
                System.err.println("FATAL " + name + " " + e + "\n" + trace);
            }
            emit("STOPPED " + name);
        }
    }

    static void rewind(KafkaConsumer<byte[], byte[]> consumer) {
        Set<TopicPartition> assigned = consumer.assignment();
        Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(assigned);
        for (TopicPartition tp : assigned) {
            OffsetAndMetadata om = committed.get(tp);
            if (om == null) consumer.seekToBeginning(List.of(tp));
            else consumer.seek(tp, om.offset());
        }
    }

    public static void main(String[] args) throws Exception {
        bootstrap = args[0];
        input = args[1];
        output = args[2];
        group = args[3];
        strategy = args[4];
        isStatic = Boolean.parseBoolean(args[5]);
        Member m = new Member(args[6]);
        m.start();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.trim().equals("crash")) m.crash = true;
            else if (line.trim().equals("stop")) break;
        }
        m.running = false;
        m.join(120000);
        System.exit(0);
    }
}
