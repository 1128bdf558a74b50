// xpython_main: the xeus-python kernel program, for the tests' existing
// kernelspecs. Debian 12 ships the xeus-python library (libxeus-python0,
// xeus-python-dev, python3-xeus-python-shell) but not its `xpython`
// program; this small launcher (ours, built by `make test-deps` into
// /usr/local/lib/codebox-tests/xpython) embeds Debian's Python, makes the
// library's interpreter and serves it on the connection file given by -f,
// as xpython does. Single-threaded until the kernel starts.
#include <csignal>
#include <memory>
#include <string>

#include <pybind11/embed.h>
#include <zmq.hpp>

#include "xeus/xeus_context.hpp"
#include "xeus/xkernel.hpp"
#include "xeus/xkernel_configuration.hpp"
#include "xeus/xserver_zmq.hpp"
#include "xeus-python/xinterpreter.hpp"
#include "xeus-python/xutils.hpp"

namespace py = pybind11;

int main(int argc, char *argv[])
{
    std::signal(SIGINT, SIG_IGN);   // interrupts come as interrupt_request
    std::string connection_file = xpyt::extract_parameter("-f", argc, argv);
    if (connection_file.empty())
        return 2;
    py::scoped_interpreter python{};
    auto context = xeus::make_context<zmq::context_t>();
    // the interpreter takes and releases the GIL itself
    std::unique_ptr<xeus::xinterpreter> interpreter(new xpyt::interpreter());
    xeus::xconfiguration config = xeus::load_configuration(connection_file);
    xeus::xkernel kernel(config, xeus::get_user_name(), std::move(context),
                         std::move(interpreter), xeus::make_xserver_zmq);
    kernel.start();
    return 0;
}
