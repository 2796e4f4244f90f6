// Reads __consumer_offsets and decodes every record with Kafka's own group coordinator serde
// (GroupCoordinatorRecordSerde, from kafka-group-coordinator): a record pykafkad wrote in a format
// Kafka cannot read fails here.  Prints one line per record of the group given: the key's and the
// value's toString(), or "tombstone".
//
// Run as a single-file program: java -cp "<kafka jars>/*" GroupRecords.java BOOTSTRAP GROUP
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.coordinator.common.runtime.CoordinatorRecord;
import org.apache.kafka.coordinator.group.GroupCoordinatorRecordSerde;

public class GroupRecords {
    public static void main(String[] args) {
        Properties p = new Properties();
        p.put("bootstrap.servers", args[0]);
        p.put("key.deserializer", ByteArrayDeserializer.class.getName());
        p.put("value.deserializer", ByteArrayDeserializer.class.getName());
        p.put("exclude.internal.topics", "false");
        GroupCoordinatorRecordSerde serde = new GroupCoordinatorRecordSerde();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
            List<TopicPartition> partitions = consumer.partitionsFor("__consumer_offsets").stream()
                .map(info -> new TopicPartition(info.topic(), info.partition())).toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            var end = consumer.endOffsets(partitions);
            while (partitions.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                    CoordinatorRecord record = serde.deserialize(ByteBuffer.wrap(r.key()),
                        r.value() == null ? null : ByteBuffer.wrap(r.value()));
                    String key = record.key().toString();
                    if (!key.contains("'" + args[1] + "'")) {
                        continue;
                    }
                    System.out.println(key + " -> " + (record.value() == null ? "tombstone" : record.value().message()));
                }
            }
        }
    }
}
