import org.apache.kafka.common.protocol.Errors;

/** Prints every error code of the kafka-clients jar on the class path as "code NAME", one a line. */
public class ErrorCodes {
    public static void main(String[] args) {
        for (Errors error : Errors.values()) {
            System.out.println(error.code() + " " + error.name());
        }
    }
}
