def pytest_addoption(parser):
    parser.addoption("--dp-train", default="build/bin/dp-train", help="the dp-train binary")
