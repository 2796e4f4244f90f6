// One client of the fault injector's workloads (cluster_tests/faults/), with the Java clients.
//
// Compiled by the harness and run as: java -cp "<classes>:<kafka jars>/*" FaultClient ROLE NAME BOOTSTRAP ARGS...
//     produce NAME BOOTSTRAP TOPIC RATE              idempotent acks=all producer of unique values NAME-SEQ
//     consume NAME BOOTSTRAP TOPIC GROUP STRATEGY STATIC
//                                                    a group member that reads and commits after each poll
//     txn     NAME BOOTSTRAP TOPIC,TOPIC PARTITIONS RATE ABORT_EVERY
//                                                    a transactional producer over several topics; every
//                                                    ABORT_EVERY-th transaction is aborted on purpose
//     read    NAME BOOTSTRAP TOPIC,TOPIC PARTITIONS  a read_committed reader of every partition from 0
//     ctp     NAME BOOTSTRAP INPUT OUTPUT GROUP STATIC
//                                                    consume-transform-produce: copies INPUT to OUTPUT with
//                                                    the consumed offsets committed in the same transaction
// STRATEGY is range or cooperative-sticky; STATIC true makes NAME the group.instance.id.  The client
// stops cleanly on "stop" on stdin (a crash is the harness's SIGKILL).  It prints one JSON object a
// line on stdout, the history the checker reads:
//     {"e":"ack","c":NAME,"v":V,"t":TOPIC,"p":P,"o":O}      {"e":"send_error","c":NAME,"v":V,"err":..}
//     {"e":"assigned","c":NAME,"member":M,"gen":G,"parts":[P,..]}   (the whole assignment)
//     {"e":"read","c":NAME,"v":V,"t":TOPIC,"p":P,"o":O,"member":M,"gen":G}
//     {"e":"txn","c":NAME,"id":ID,"outcome":"committed|aborted|unknown","values":[[V,TOPIC,P],..]}
//     {"e":"copied","c":NAME,"n":N}   {"e":"error","c":NAME,"err":..}   {"e":"started"|"stopped","c":NAME}
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;

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
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public class FaultClient {
    static final AtomicBoolean running = new AtomicBoolean(true);
    static String name, bootstrap;

    static synchronized void emit(String json) {
        System.out.println(json);
        System.out.flush();
    }

    static String q(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "'").replace("\n", " ") + "\"";
    }

    static String head(String event) {
        return "{\"e\":" + q(event) + ",\"c\":" + q(name) + ",\"ms\":" + System.currentTimeMillis();
    }

    static void error(Throwable e) {
        emit(head("error") + ",\"err\":" + q(e.toString()) + "}");
    }

    static Properties common() {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("client.id", name);
        p.put("request.timeout.ms", "10000");
        p.put("default.api.timeout.ms", "30000");
        p.put("reconnect.backoff.max.ms", "1000");
        return p;
    }

    static Properties producerConfig() {
        Properties p = common();
        p.put("acks", "all");
        p.put("enable.idempotence", "true");
        p.put("linger.ms", "5");
        p.put("delivery.timeout.ms", "120000");
        p.put("max.block.ms", "30000");
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        return p;
    }

    static Properties consumerConfig(String group, String strategy, boolean isStatic, boolean committed) {
        Properties c = common();
        c.put("group.id", group);
        c.put("enable.auto.commit", "false");
        c.put("auto.offset.reset", "earliest");
        c.put("isolation.level", committed ? "read_committed" : "read_uncommitted");
        c.put("max.poll.records", "100");
        c.put("session.timeout.ms", "10000");
        c.put("heartbeat.interval.ms", "1000");
        c.put("partition.assignment.strategy", strategy.equals("range")
                ? "org.apache.kafka.clients.consumer.RangeAssignor"
                : "org.apache.kafka.clients.consumer.CooperativeStickyAssignor");
        if (isStatic) c.put("group.instance.id", name);
        c.put("key.deserializer", StringDeserializer.class.getName());
        c.put("value.deserializer", StringDeserializer.class.getName());
        return c;
    }

    static void pace(long started, long sent, double rate) throws InterruptedException {
        long due = started + (long) (sent * 1000.0 / rate);
        long wait = due - System.currentTimeMillis();
        if (wait > 0) Thread.sleep(wait);
    }

    // -- produce ---------------------------------------------------------------------------------

    static void produce(String topic, double rate) throws Exception {
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerConfig())) {
            long started = System.currentTimeMillis();
            long seq = 0;
            while (running.get()) {
                String v = name + "-" + seq++;
                producer.send(new ProducerRecord<>(topic, v, v), (md, e) -> {
                    if (e == null) {
                        emit(head("ack") + ",\"v\":" + q(v) + ",\"t\":" + q(md.topic()) + ",\"p\":" + md.partition()
                                + ",\"o\":" + md.offset() + "}");
                    } else {
                        emit(head("send_error") + ",\"v\":" + q(v) + ",\"err\":" + q(e.toString()) + "}");
                    }
                });
                pace(started, seq, rate);
            }
            producer.flush();
        }
    }

    // -- consume ---------------------------------------------------------------------------------

    static String assignedEvent(KafkaConsumer<String, String> consumer) {
        StringBuilder parts = new StringBuilder();
        for (TopicPartition tp : consumer.assignment()) {
            if (parts.length() > 0) parts.append(',');
            parts.append(tp.partition());
        }
        return head("assigned") + ",\"member\":" + q(consumer.groupMetadata().memberId()) + ",\"gen\":"
                + consumer.groupMetadata().generationId() + ",\"parts\":[" + parts + "]}";
    }

    static void consume(String topic, String group, String strategy, boolean isStatic) {
        try (KafkaConsumer<String, String> consumer =
                     new KafkaConsumer<>(consumerConfig(group, strategy, isStatic, false))) {
            consumer.subscribe(List.of(topic), new ConsumerRebalanceListener() {
                public void onPartitionsRevoked(Collection<TopicPartition> tps) {
                    emit(head("revoked") + ",\"n\":" + tps.size() + "}");
                }

                public void onPartitionsAssigned(Collection<TopicPartition> tps) {
                    emit(assignedEvent(consumer));
                }

                public void onPartitionsLost(Collection<TopicPartition> tps) {
                    emit(head("lost") + ",\"n\":" + tps.size() + "}");
                }
            });
            emit(head("started") + "}");
            while (running.get()) {
                try {
                    ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(200));
                    if (records.isEmpty()) continue;
                    String member = consumer.groupMetadata().memberId();
                    int gen = consumer.groupMetadata().generationId();
                    for (ConsumerRecord<String, String> r : records) {
                        emit(head("read") + ",\"v\":" + q(r.value()) + ",\"t\":" + q(r.topic()) + ",\"p\":"
                                + r.partition() + ",\"o\":" + r.offset() + ",\"member\":" + q(member)
                                + ",\"gen\":" + gen + "}");
                    }
                    consumer.commitSync();
                } catch (KafkaException e) {
                    // A commit refused after a rebalance, a timeout while a coordinator moves: the
                    // records since the last commit are read again, which the checker allows.
                    error(e);
                }
            }
        }
    }

    // -- transactions ----------------------------------------------------------------------------

    static KafkaProducer<String, String> transactional() {
        Properties p = producerConfig();
        p.put("transactional.id", name);
        p.put("transaction.timeout.ms", "20000");
        KafkaProducer<String, String> producer = new KafkaProducer<>(p);
        try {
            producer.initTransactions();
        } catch (KafkaException e) {
            closeQuietly(producer);
            throw e;
        }
        return producer;
    }

    static void txn(String[] topics, int partitions, double rate, int abortEvery) throws Exception {
        Random random = new Random(name.hashCode());
        KafkaProducer<String, String> producer = null;
        long started = System.currentTimeMillis();
        long k = 0;
        while (running.get()) {
            pace(started, k, rate);
            String id = name + "-" + k++;
            List<String> values = new ArrayList<>();
            String outcome = "unknown";
            try {
                if (producer == null) producer = transactional();
                producer.beginTransaction();
                int n = 2 + random.nextInt(3);
                for (int i = 0; i < n; i++) {
                    String topic = topics[random.nextInt(topics.length)];
                    int partition = random.nextInt(partitions);
                    String v = id + "-" + i;
                    producer.send(new ProducerRecord<>(topic, partition, v, v));
                    values.add("[" + q(v) + "," + q(topic) + "," + partition + "]");
                }
                producer.flush();
                if (k % abortEvery == 0) {
                    producer.abortTransaction();
                    outcome = "aborted";
                } else {
                    commit(producer);
                    outcome = "committed";
                }
            } catch (ProducerFencedException | OutOfOrderSequenceException | AuthorizationException
                     | UnsupportedVersionException | InvalidProducerEpochException e) {
                error(e);
                producer = closeQuietly(producer);
            } catch (KafkaException e) {
                error(e);
                if (producer == null) continue;
                try {
                    producer.abortTransaction();
                    outcome = "aborted";
                } catch (KafkaException e2) {
                    error(e2);
                    producer = closeQuietly(producer);
                }
            }
            emit(head("txn") + ",\"id\":" + q(id) + ",\"outcome\":" + q(outcome) + ",\"values\":["
                    + String.join(",", values) + "]}");
        }
        closeQuietly(producer);
    }

    // A commit that timed out may be retried: it completes what the first one started.
    static void commit(KafkaProducer<String, String> producer) {
        for (int attempt = 0; ; attempt++) {
            try {
                producer.commitTransaction();
                return;
            } catch (TimeoutException e) {
                if (attempt >= 5) throw e;
                error(e);
            }
        }
    }

    static KafkaProducer<String, String> closeQuietly(KafkaProducer<String, String> producer) {
        if (producer != null) {
            try {
                producer.close(Duration.ofSeconds(5));
            } catch (KafkaException e) {
                error(e);
            }
        }
        return null;
    }

    static void read(String[] topics, int partitions) {
        Properties c = consumerConfig("unused", "range", false, true);
        c.remove("group.id");
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c)) {
            List<TopicPartition> all = new ArrayList<>();
            for (String t : topics) for (int p = 0; p < partitions; p++) all.add(new TopicPartition(t, p));
            consumer.assign(all);
            consumer.seekToBeginning(all);
            emit(head("started") + "}");
            while (running.get()) {
                try {
                    for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                        emit(head("read") + ",\"v\":" + q(r.value()) + ",\"t\":" + q(r.topic()) + ",\"p\":"
                                + r.partition() + ",\"o\":" + r.offset() + "}");
                    }
                } catch (KafkaException e) {
                    error(e);
                }
            }
        }
    }

    // -- consume-transform-produce ---------------------------------------------------------------

    static void ctp(String input, String output, String group, boolean isStatic) throws Exception {
        while (running.get()) {
            try (KafkaConsumer<String, String> consumer =
                         new KafkaConsumer<>(consumerConfig(group, "cooperative-sticky", isStatic, true));
                 KafkaProducer<String, String> producer = transactional()) {
                consumer.subscribe(List.of(input), new ConsumerRebalanceListener() {
                    public void onPartitionsRevoked(Collection<TopicPartition> tps) {
                    }

                    public void onPartitionsAssigned(Collection<TopicPartition> tps) {
                        emit(assignedEvent(consumer));
                    }
                });
                emit(head("started") + "}");
                while (running.get()) {
                    ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(200));
                    if (records.isEmpty()) continue;
                    producer.beginTransaction();
                    try {
                        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                        for (ConsumerRecord<String, String> r : records) {
                            producer.send(new ProducerRecord<>(output, r.key(), r.value()));
                            offsets.put(new TopicPartition(r.topic(), r.partition()),
                                    new OffsetAndMetadata(r.offset() + 1));
                        }
                        producer.sendOffsetsToTransaction(offsets, consumer.groupMetadata());
                        commit(producer);
                        emit(head("copied") + ",\"n\":" + records.count() + "}");
                    } catch (ProducerFencedException | OutOfOrderSequenceException | AuthorizationException
                             | UnsupportedVersionException | InvalidProducerEpochException e) {
                        throw e;
                    } catch (KafkaException e) {
                        // The generation moved on, a coordinator moved: abort, and go back to the last
                        // committed offsets so nothing is lost or copied twice.
                        error(e);
                        producer.abortTransaction();
                        rewind(consumer);
                    }
                }
            } catch (KafkaException e) {
                // Fenced or fatal: a new producer and consumer (the new producer's InitProducerId
                // aborts whatever the old one left open).
                error(e);
            }
        }
    }

    static void rewind(KafkaConsumer<String, String> consumer) {
        Set<TopicPartition> assigned = consumer.assignment();
        Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(assigned);
        for (TopicPartition tp : assigned) {
            OffsetAndMetadata om = committed.get(tp);
            if (om == null) consumer.seekToBeginning(List.of(tp));
            else consumer.seek(tp, om.offset());
        }
    }

    public static void main(String[] args) throws Exception {
        String role = args[0];
        name = args[1];
        bootstrap = args[2];
        Thread worker = new Thread(() -> {
            try {
                switch (role) {
                    case "produce" -> produce(args[3], Double.parseDouble(args[4]));
                    case "consume" -> consume(args[3], args[4], args[5], Boolean.parseBoolean(args[6]));
                    case "txn" -> txn(args[3].split(","), Integer.parseInt(args[4]), Double.parseDouble(args[5]),
                            Integer.parseInt(args[6]));
                    case "read" -> read(args[3].split(","), Integer.parseInt(args[4]));
                    case "ctp" -> ctp(args[3], args[4], args[5], Boolean.parseBoolean(args[6]));
                    default -> throw new IllegalArgumentException("unknown role " + role);
                }
            } catch (Throwable e) {
                error(e);
                e.printStackTrace();
            }
            emit(head("stopped") + "}");
        });
        worker.start();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null && !line.trim().equals("stop")) {
            // only "stop" is a command
        }
        running.set(false);
        worker.join(60000);
        System.exit(0);
    }
}
