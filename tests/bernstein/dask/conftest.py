"""A local cluster of two single-threaded worker processes, shared by the dask tests."""

import pytest

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="session")
def client():
    # one per session (per pytest-xdist worker): starting a cluster, and importing fusion in
    # its workers, costs about 10 s of CPU, as much as several of the tests
    cluster = distributed.LocalCluster(
        n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None
    )
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()
