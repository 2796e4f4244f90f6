"""The web console in a real browser: headless Chromium from Debian's packages driven by Selenium
(the system's chromedriver, no browser download), against a broker process whose data changes
while the pages are open.  A screenshot of each page goes to ``.cache/test-output/console/``."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, NewTopic, ResourceType
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from compat_tests.broker_process import BrokerProcess, free_port
from compat_tests.consumer_protocol_support import Member
from compat_tests.test_share_consumers import SHARE_MEMBER

SCREENSHOTS = Path(__file__).parent.parent / ".cache" / "test-output" / "console"
CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"


class Console:
    def __init__(self, work: Path) -> None:
        self.http_port = free_port()
        self.broker = BrokerProcess(work / "logs", {"metrics.listener": f"http://127.0.0.1:{self.http_port}",
                                                    "metrics.console.enable": "true",
                                                    "group.initial.rebalance.delay.ms": "0"}, name="console")
        self.topic, self.group = f"web-{uuid.uuid4().hex[:6]}", f"webg-{uuid.uuid4().hex[:6]}"
        self.registry_url: str | None = None

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.http_port}{path}"

    def produce(self, first: int, count: int) -> None:
        producer = Producer({"bootstrap.servers": self.broker.bootstrap})
        for n in range(first, first + count):
            producer.produce(self.topic, json.dumps({"order": n, "item": f"item-{n}"}).encode(), key=f"k{n}".encode(),
                             partition=0, headers=[("source", f"shop-{n % 3}".encode())])
        assert producer.flush(30) == 0

    def commit(self, offset: int) -> None:
        consumer = Consumer({"bootstrap.servers": self.broker.bootstrap, "group.id": self.group,
                             "enable.auto.commit": False})
        try:
            consumer.commit(offsets=[TopicPartition(self.topic, 0, offset)], asynchronous=False)
        finally:
            consumer.close()


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Console]:
    server = Console(tmp_path_factory.mktemp("console"))
    server.broker.start()
    admin = AdminClient({"bootstrap.servers": server.broker.bootstrap})
    admin.create_topics([NewTopic(server.topic, 2, 1)])[server.topic].result(timeout=30)
    server.produce(0, 40)
    server.commit(25)
    yield server
    server.broker.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    for path in (CHROMIUM, CHROMEDRIVER):
        if not Path(path).exists():
            pytest.fail(f"{path} is missing: run `make system-deps` (Debian's chromium and chromium-driver)",
                        pytrace=False)
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1000"):
        options.add_argument(arg)
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    driver.set_page_load_timeout(30)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    yield driver
    driver.quit()


def _open(browser: webdriver.Chrome, console: Console, path: str, shot: str) -> None:
    browser.get(console.url(path))
    browser.save_screenshot(str(SCREENSHOTS / f"{shot}.png"))


def _cells(browser: webdriver.Chrome, table_id: str) -> list[list[str]]:
    rows = browser.find_elements(By.CSS_SELECTOR, f"#{table_id} tbody tr")
    return [[c.text for c in row.find_elements(By.TAG_NAME, "td")] for row in rows]


def test_brokers_and_topics(browser: webdriver.Chrome, console: Console) -> None:
    _open(browser, console, "/", "brokers")
    [broker] = _cells(browser, "brokers")
    assert broker[0] == "1" and broker[2] == str(console.broker.port) and broker[5] == "controller"
    _open(browser, console, "/topics", "topics")
    rows = {r[0]: r for r in _cells(browser, "topics")}
    assert rows[console.topic][1:4] == ["2", "1", "in sync"]
    browser.find_element(By.LINK_TEXT, console.topic).click()
    browser.save_screenshot(str(SCREENSHOTS / "topic.png"))
    partitions = _cells(browser, "partitions")
    assert [p[0] for p in partitions] == ["0", "1"] and partitions[0][5] == "40"


def test_group_lag_follows_the_data(browser: webdriver.Chrome, console: Console) -> None:
    _open(browser, console, f"/groups/{console.group}", "group")
    [row] = [r for r in _cells(browser, "lag") if r[1] == "0"]
    assert row[2:5] == ["25", "40", "15"]
    console.produce(40, 10)  # the data changes under the open page
    browser.refresh()
    [row] = [r for r in _cells(browser, "lag") if r[1] == "0"]
    assert row[3:5] == ["50", "25"]
    _open(browser, console, "/groups", "groups")
    assert console.group in [r[0] for r in _cells(browser, "groups")]


def test_a_share_group_shows_its_members_start_offsets_and_lag(browser: webdriver.Chrome,
                                                               console: Console) -> None:
    """A share group's page (KIP-932): its members while they read, then each share-partition's start
    offset and lag, which grows with the data."""
    admin = AdminClient({"bootstrap.servers": console.broker.bootstrap})
    topic, group = f"webq-{uuid.uuid4().hex[:6]}", f"webs-{uuid.uuid4().hex[:6]}"
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(timeout=30)
    resource = ConfigResource(ResourceType.GROUP, group, incremental_configs=[
        ConfigEntry("share.auto.offset.reset", "earliest", incremental_operation=AlterConfigOpType.SET)])
    admin.incremental_alter_configs([resource])[resource].result()
    producer = Producer({"bootstrap.servers": console.broker.bootstrap})
    for n in range(10):
        producer.produce(topic, f"job-{n}".encode())
    assert producer.flush(30) == 0
    member = Member("rdkafka", console.broker.bootstrap, group, topic, programs=SHARE_MEMBER, mode=("ack",))
    try:
        member.wait_for("every record accepted", lambda: sum(line.startswith("record ") for line in member.lines)
                        == 10 and member.lines[-1] == "committed")
        _open(browser, console, f"/groups/{group}", "share-group")
        [row] = _cells(browser, "members")
        assert row[1:5] == ["rdkafka", row[2], f"{topic}-0", "share"], row
        member.leave()
    finally:
        member.close()
    for n in range(10, 15):
        producer.produce(topic, f"job-{n}".encode())
    assert producer.flush(30) == 0
    browser.refresh()
    assert _cells(browser, "members") == []
    assert _cells(browser, "lag") == [[topic, "0", "10", "5", ""]]
    _open(browser, console, "/groups", "groups")
    assert [group, "Empty", "share", "0"] in _cells(browser, "groups")


def test_message_browser(browser: webdriver.Chrome, console: Console) -> None:
    _open(browser, console, f"/browse?topic={console.topic}&partition=0&offset=5&count=3&format=json", "messages")
    records = _cells(browser, "records")
    assert [r[0] for r in records] == ["5", "6", "7"]
    assert json.loads(records[0][3]) == {"order": 5, "item": "item-5"} and records[0][2] == "k5"
    assert records[0][4] == "source: shop-2"
    browser.get(console.url(f"/browse?topic={console.topic}&partition=0&offset=0&count=1&format=hex"))
    assert _cells(browser, "records")[0][3].startswith("7b 22")  # '{"'
    browser.get(console.url(f"/browse?topic={console.topic}&partition=0&timestamp={int(time.time() * 1000) + 60_000}"))
    assert _cells(browser, "records") == []
    browser.get(console.url(f"/browse?topic={console.topic}&partition=7"))
    assert "does not exist" in browser.find_element(By.ID, "error").text


def test_search_finds_the_message_with_progress(browser: webdriver.Chrome, console: Console) -> None:
    browser.get(console.url(f"/search?topic={console.topic}"))
    form = browser.find_element(By.TAG_NAME, "form")
    form.find_element(By.NAME, "value").send_keys('"item-33"')
    form.find_element(By.NAME, "header").send_keys("shop-0")
    form.find_element(By.TAG_NAME, "button").click()
    # The results page replaces the form's page: wait for it before reading it.
    WebDriverWait(browser, 30).until(lambda b: b.find_elements(By.ID, "search"))
    box = browser.find_element(By.ID, "search")
    WebDriverWait(browser, 30).until(lambda b: b.find_element(By.ID, "search").get_attribute("data-done") == "true")
    browser.save_screenshot(str(SCREENSHOTS / "search.png"))
    assert box.find_element(By.ID, "progress").get_attribute("value") == "100"
    assert "done: 1 match(es)" in box.find_element(By.ID, "status").text
    [match] = [[c.text for c in r.find_elements(By.TAG_NAME, "td")]
               for r in browser.find_elements(By.CSS_SELECTOR, "#matches tr")]
    assert match[0] == "33" and json.loads(match[3]) == {"order": 33, "item": "item-33"}


def test_the_browser_shows_what_read_committed_consumers_see(browser: webdriver.Chrome, console: Console) -> None:
    topic = f"txn-{uuid.uuid4().hex[:6]}"
    admin = AdminClient({"bootstrap.servers": console.broker.bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(timeout=30)
    producer = Producer({"bootstrap.servers": console.broker.bootstrap, "transactional.id": f"{topic}-p"})
    producer.init_transactions(30)
    for value, commit in ((b"kept-1", True), (b"dropped", False), (b"kept-2", True)):
        producer.begin_transaction()
        producer.produce(topic, value)
        producer.flush(30)
        (producer.commit_transaction if commit else producer.abort_transaction)(30)
    _open(browser, console, f"/browse?topic={topic}&partition=0&count=10", "messages-transactions")
    assert [r[3] for r in _cells(browser, "records")] == ["kept-1", "kept-2"]
    browser.get(console.url(f"/search?topic={topic}&partition=0&value=dropped"))
    WebDriverWait(browser, 30).until(lambda b: b.find_element(By.ID, "search").get_attribute("data-done") == "true")
    assert "done: 0 match(es)" in browser.find_element(By.ID, "status").text


ORDER_AVRO = {"type": "record", "name": "Order", "namespace": "shop",
              "fields": [{"name": "id", "type": "long"}, {"name": "item", "type": "string"},
                         {"name": "price", "type": ["null", "double"], "default": None}]}
ORDER_JSON = {"$schema": "http://json-schema.org/draft-07/schema#", "title": "Order", "type": "object",
              "properties": {"id": {"type": "integer"}, "item": {"type": "string"}}}


@pytest.fixture(scope="module")
def registry_console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Console]:
    """A console on a broker that runs the schema registry too."""
    server = Console(tmp_path_factory.mktemp("registry-console"))
    server.registry_url = f"http://127.0.0.1:{free_port()}"
    server.broker.overrides.update({"schema.registry.listener": server.registry_url,
                                    "offsets.topic.replication.factor": "1"})
    server.broker.start()
    yield server
    server.broker.close()


def test_records_are_decoded_through_the_schema_registry_beside_their_raw_bytes(
        browser: webdriver.Chrome, registry_console: Console, tmp_path: Path) -> None:
    # Imported here: the registry suite's helpers (its fixtures stay in its own module).
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.schema_registry.json_schema import JSONSerializer
    from confluent_kafka.schema_registry.protobuf import ProtobufSerializer

    from compat_tests.storage_support import wait_for
    from compat_tests.test_schema_registry import SHIPMENT_PROTO, _compiled_module, _produce, _up

    console = registry_console
    wait_for("the registry answers", lambda: _up(console.registry_url), timeout=60)
    client = SchemaRegistryClient({"url": console.registry_url})
    bootstrap = console.broker.bootstrap
    suffix = uuid.uuid4().hex[:6]
    avro, json_topic, proto = f"avro-{suffix}", f"json-{suffix}", f"proto-{suffix}"
    _produce(bootstrap, avro, AvroSerializer(client, json.dumps(ORDER_AVRO)),
             [{"id": 1, "item": "tea", "price": 2.5}, {"id": 2, "item": "cake", "price": None}])
    _produce(bootstrap, json_topic, JSONSerializer(json.dumps(ORDER_JSON), client), [{"id": 3, "item": "jam"}])
    module = _compiled_module(tmp_path, "shipment_console", SHIPMENT_PROTO.replace("package shop;",
                                                                                     "package shopconsole;"))
    shipment = module.Shipment(id=7, address="1 Kafka Road")
    _produce(bootstrap, proto, ProtobufSerializer(module.Shipment, client, {"use.deprecated.format": False}),
             [shipment])
    # A producer that skipped its serializer: shown as it is, and said so.
    producer = Producer({"bootstrap.servers": bootstrap})
    producer.produce(avro, b"plain text")
    assert producer.flush(30) == 0
    ids = {topic: client.get_latest_version(f"{topic}-value").schema_id for topic in (avro, json_topic, proto)}

    _open(browser, console, f"/browse?topic={avro}&partition=0&format=schema", "messages-schema")
    records = _cells(browser, "records")
    assert [json.loads(r[3]) for r in records[:2]] == [{"id": 1, "item": "tea", "price": 2.5},
                                                        {"id": 2, "item": "cake", "price": None}]
    assert records[0][4] == f"id {ids[avro]} · AVRO · {avro}-value v1"
    assert records[0][5].startswith(f"00 00 00 00 {ids[avro]:02x} 02 06 74 65 61"), records[0][5]  # id 1, "tea"
    assert (records[2][3], records[2][4], records[2][5]) == ("plain text", "not in the registry's wire format",
                                                             b"plain text".hex(" "))
    browser.get(console.url(f"/browse?topic={json_topic}&partition=0&format=schema"))
    [record] = _cells(browser, "records")
    assert json.loads(record[3]) == {"id": 3, "item": "jam"} and record[4] == f"id {ids[json_topic]} · JSON · " \
        f"{json_topic}-value v1"
    browser.get(console.url(f"/browse?topic={proto}&partition=0&format=schema"))
    [record] = _cells(browser, "records")
    assert json.loads(record[3]) == {"id": "7", "address": "1 Kafka Road"}  # Protobuf's JSON mapping: int64 as text
    assert record[4] == f"id {ids[proto]} · PROTOBUF · {proto}-value v1"

    # The topic page lists the topic's subjects and their versions.
    _open(browser, console, f"/topics/{avro}", "topic-schemas")
    [subject] = _cells(browser, "subjects")
    assert subject[:4] == [f"{avro}-value", "AVRO", "BACKWARD", f"v1 (id {ids[avro]})"]
    browser.find_element(By.LINK_TEXT, "decoded records").click()
    assert json.loads(_cells(browser, "records")[0][3])["item"] == "tea"


def test_decoding_without_a_registry_says_so(browser: webdriver.Chrome, console: Console) -> None:
    browser.get(console.url(f"/browse?topic={console.topic}&partition=0&format=schema"))
    assert browser.find_element(By.ID, "error").text.startswith("no schema registry has written to _schemas")
    browser.get(console.url(f"/topics/{console.topic}"))
    assert "no schema registry has written to _schemas" in browser.find_element(By.ID, "subjects-none").text
    # No rest.listener here either: the page says so instead of linking to a proxy.
    assert browser.find_element(By.ID, "rest-none").text == "The REST proxy is off here (rest.listener)."
