"""The Jupyter kernel gateway API (issue 17), first part: /api and the
kernelspecs in the shape Jupyter Server serves them, with their resources
(logos, kernel.js) served from the spec's folder and nothing else of it;
checked against Debian's jupyter_server, whose GatewayClient reads them."""
import json
import subprocess


ENV = {"CODEBOX_POOL_SIZE": "0"}


def test_api_and_kernelspecs_in_jupyters_shape(server_factory):
    s = server_factory(env=ENV)
    assert s.get("/api").json() == {"version": s.get("/api").json()["version"]}
    specs = s.get("/api/kernelspecs").json()
    assert specs["default"] == "python3"
    py = specs["kernelspecs"]["python3"]
    assert py["name"] == "python3" and py["spec"]["language"] == "python"
    assert py["spec"]["argv"][-1] == "{connection_file}"
    assert py["resources"]["logo-64x64"] == "/kernelspecs/python3/logo-64x64.png", py
    assert s.get("/kernelspecs").json()["kernelspecs"]["python3"]["resources"] == py["resources"]
    assert s.get("/api/kernelspecs/python3").json() == py
    assert s.get("/api/kernelspecs/no-such").status == 404
    r = s.get(py["resources"]["logo-64x64"])
    assert r.status == 200 and r.headers["Content-Type"] == "image/png"
    with open("/usr/share/jupyter/kernels/python3/logo-64x64.png", "rb") as f:
        assert r.body == f.read()
    # only resources, only from the spec's own folder
    for path in ("/kernelspecs/python3/kernel.json", "/kernelspecs/python3/..%2Fpython3%2Fkernel.json",
                 "/kernelspecs/python3/logo-..png", "/kernelspecs/no-such/logo-64x64.png",
                 "/kernelspecs/python3/%2Fetc%2Fpasswd"):
        assert s.get(path).status == 404, path


def test_jupyter_servers_gateway_client_lists_our_kernelspecs(server_factory):
    """jupyter_server's own GatewayClient reads /api/kernelspecs."""
    s = server_factory(env=ENV)
    code = (
        "import asyncio, json\n"
        "from jupyter_server.gateway.managers import GatewayClient, GatewayKernelSpecManager\n"
        "GatewayClient.instance(url='http://127.0.0.1:%d')\n"
        "m = GatewayKernelSpecManager()\n"
        "specs = asyncio.run(m.list_kernel_specs())['kernelspecs']\n"
        "print(json.dumps(sorted(specs)))\n"
        "print(json.dumps(specs['python3']['resources']))\n" % s.port)
    p = subprocess.run(["/usr/bin/python3", "-c", code], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stderr
    names, resources = [json.loads(line) for line in p.stdout.splitlines()[-2:]]
    assert "python3" in names, names
    assert "logo-64x64" in resources, resources


def test_jupyter_token_scheme(server_factory):
    """Jupyter's clients send Authorization: token T."""
    s = server_factory(env=dict(ENV, CODEBOX_API_TOKENS="sekrit"), token="sekrit")
    assert s.get("/api/kernelspecs", token=None).status == 401
    r = s.get("/api/kernelspecs", token=None, headers={"Authorization": "token sekrit"})
    assert r.status == 200, r.text
    assert s.get("/api/kernelspecs", token=None,
                 headers={"Authorization": "token wrong"}).status == 401
