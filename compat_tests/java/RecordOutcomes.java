// Produces N records in one batch with Kafka's Java producer and prints each record's outcome.
//
// Run as a single-file program (Java 11+): java -cp "<kafka jars>/*" RecordOutcomes.java
//     BOOTSTRAP TOPIC COUNT KEYLESS_EVERY [producer.key=value ...]
// Record i has value "v-i" and key "k-i", except every KEYLESS_EVERY-th (i % KEYLESS_EVERY == 0),
// which has none.  linger.ms is long and flush() sends, so all records leave in one batch.
// Prints one line per record, in index order: "i<TAB>OK<TAB>offset" or
// "i<TAB>ERR<TAB>ExceptionClass<TAB>message".
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public class RecordOutcomes {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String topic = args[1];
        int count = Integer.parseInt(args[2]);
        int keylessEvery = Integer.parseInt(args[3]);
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("key.serializer", ByteArraySerializer.class.getName());
        props.put("value.serializer", ByteArraySerializer.class.getName());
        props.put("linger.ms", "60000");
        props.put("delivery.timeout.ms", "120000");
        props.put("request.timeout.ms", "30000");
        for (int i = 4; i < args.length; i++) {
            String[] kv = args[i].split("=", 2);
            props.put(kv[0], kv[1]);
        }
        List<Future<RecordMetadata>> sent = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props)) {
            // Wait for metadata first, so that the records are not held back one by one.
            producer.partitionsFor(topic);
            for (int i = 0; i < count; i++) {
                byte[] key = i % keylessEvery == 0 ? null : ("k-" + i).getBytes(StandardCharsets.UTF_8);
                byte[] value = ("v-" + i).getBytes(StandardCharsets.UTF_8);
                sent.add(producer.send(new ProducerRecord<>(topic, 0, key, value)));
            }
            producer.flush();
            for (int i = 0; i < count; i++) {
                try {
                    RecordMetadata md = sent.get(i).get(90, TimeUnit.SECONDS);
                    System.out.println(i + "\tOK\t" + md.offset());
                } catch (ExecutionException e) {
                    Throwable cause = e.getCause();
                    String message = String.valueOf(cause.getMessage()).replace('\n', ' ').replace('\t', ' ');
                    System.out.println(i + "\tERR\t" + cause.getClass().getSimpleName() + "\t" + message);
                }
            }
        }
    }
}
