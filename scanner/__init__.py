"""kubehop: what breaks when a cluster moves from one Kubernetes minor to the next."""

__version__ = "0.1.0"
# Where a user reads about kubehop (SARIF's tool.driver.informationUri): the package's page.
__url__ = "https://pypi.org/project/kubehop/"
