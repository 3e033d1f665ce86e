"""A local cluster of two single-threaded worker processes, shared by the dask tests."""

import pytest

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="package")
def client():
    # one for the package's modules: starting a cluster and importing fusion in its workers
    # costs about 10 s of CPU. Not per session: an idle cluster costs 0.14 s of CPU a second
    # until the session ends.
    cluster = distributed.LocalCluster(
        n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None
    )
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()
