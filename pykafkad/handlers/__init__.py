"""Request handlers, one module per API family; ``APIS`` maps an API key to its handler and versions.

The advertised versions are exactly the ones listed here: each handler is written and
tested for that whole range.
"""

from __future__ import annotations

from pykafkad.handlers import (
    acls,
    alter_configs,
    alter_replica_log_dirs,
    api_versions,
    client_quotas,
    consumer_groups,
    delete_records,
    describe_cluster,
    describe_configs,
    describe_log_dirs,
    describe_topic_partitions,
    elect_leaders,
    fetch,
    find_coordinator,
    group_offsets,
    groups,
    init_producer_id,
    list_config_resources,
    list_offsets,
    metadata,
    offset_for_leader_epoch,
    partition_reassignments,
    produce,
    sasl,
    scram_credentials,
    share_fetch,
    share_group_offsets,
    share_group_state,
    share_groups,
    telemetry,
    topics_admin,
    transactions,
    update_features,
    write_txn_markers,
)
from pykafkad.handlers.api import Api

APIS: dict[int, Api] = {
    api.key: api
    for module in (
        produce,
        fetch,
        list_offsets,
        metadata,
        api_versions,
        topics_admin,
        describe_configs,
        init_producer_id,
        offset_for_leader_epoch,
        describe_cluster,
        find_coordinator,
        groups,
        consumer_groups,
        share_groups,
        share_fetch,
        share_group_state,
        share_group_offsets,
        group_offsets,
        alter_configs,
        describe_log_dirs,
        alter_replica_log_dirs,
        delete_records,
        elect_leaders,
        partition_reassignments,
        transactions,
        update_features,
        write_txn_markers,
        sasl,
        scram_credentials,
        client_quotas,
        acls,
        describe_topic_partitions,
        list_config_resources,
        telemetry,
    )
    for api in module.APIS
}

__all__ = ["APIS", "Api"]
