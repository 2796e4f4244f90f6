"""PySpark pipelines shipped with pykafkad: ``pykafkad pipeline NAME ...`` or, on any Spark
cluster, ``spark-submit pykafkad/pipelines/NAME.py ...``.

One module per pipeline (mirror, archive, merge, search, sql, avro), each with ``main(argv)``, plus
``common`` for the shared options, session, Kafka reader/writer settings and progress display.
Nothing here imports the broker; importing this package does not import pyspark either.
"""

PIPELINES = {
    "mirror": "continuously copy a topic (or a pattern) to another topic, here or on another cluster",
    "archive": "continuously copy a topic into an archive topic with its own retention, or into Parquet",
    "merge": "union several topics into one (source topic in a header), or count per key per minute",
    "search": "find messages by key, header or value substring within an offset or time range",
    "sql": "run a Spark SQL query over topics exposed as tables; print it or write it to a topic",
    "avro": "turn a topic of JSON records into Avro in the schema registry's format (schema inferred or given)",
}
