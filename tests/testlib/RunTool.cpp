#include "testlib/RunTool.h"

#include "testlib/Golden.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace spyre::test {

namespace {
std::string slurp(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
} // namespace

ToolResult runSpyre(const std::vector<std::string> &args, const std::string &cwd,
                    const std::string &stdinData) {
  return runExecutable(SPYRE_BIN, args, cwd, stdinData);
}

ToolResult runExecutable(const std::string &exe,
                         const std::vector<std::string> &args,
                         const std::string &cwd, const std::string &stdinData) {
  std::string dir = makeTempDir();
  std::string outPath = dir + "/stdout", errPath = dir + "/stderr",
              inPath = dir + "/stdin";
  {
    std::ofstream in(inPath, std::ios::binary);
    in << stdinData;
  }
  std::vector<std::string> argvStore;
  argvStore.emplace_back(exe);
  argvStore.insert(argvStore.end(), args.begin(), args.end());
  std::vector<char *> argv;
  for (std::string &a : argvStore)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  std::string workDir = cwd.empty() ? std::string(SPYRE_SOURCE_DIR) : cwd;

  pid_t pid = ::fork();
  if (pid == 0) {
    int in = ::open(inPath.c_str(), O_RDONLY);
    int out = ::open(outPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = ::open(errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0 || err < 0 || ::chdir(workDir.c_str()) != 0)
      ::_exit(127);
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(err, 2);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ToolResult r;
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid) {
    ADD_FAILURE() << "could not run " << exe;
    return r;
  }
  if (WIFEXITED(status))
    r.exitCode = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    r.exitCode = 128 + WTERMSIG(status);
  r.out = slurp(outPath);
  r.err = slurp(errPath);
  return r;
}

std::string firstLine(const std::string &text) {
  return text.substr(0, text.find('\n'));
}

} // namespace spyre::test
