// Expansion of input patterns (files, directories and globs) and encoding detection by
// magic bytes.
#include "strata/data/input_files.h"

#include <fcntl.h>
#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace strata {
namespace {

bool HasGlobChars(const std::string& s) {
  return s.find_first_of("*?[") != std::string::npos;
}

// Opens path once to check that it can be read; *is_dir: whether it is a directory.
Status CheckReadable(const std::string& path, bool* is_dir) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("cannot open input file " + path, errno);
  struct stat st;
  int rc = ::fstat(fd, &st);
  int err = errno;
  ::close(fd);
  if (rc != 0) return ErrnoStatus("cannot stat input file " + path, err);
  *is_dir = S_ISDIR(st.st_mode);
  return Status::OK();
}

// A directory's data files in name order: its files (or links to files) whose names start
// with neither '.' nor '_', so hidden files and the _SUCCESS and .crc files that Spark and
// Hadoop write beside their part files are left out. Not recursive.
Status DirectoryFiles(const std::string& dir, std::vector<std::string>* out) {
  namespace fs = std::filesystem;
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name[0] == '.' || name[0] == '_') continue;
    std::error_code kind;
    if (it->is_regular_file(kind)) names.push_back(name);
  }
  if (ec) return Status::IOError("cannot list input directory " + dir + ": " + ec.message());
  if (names.empty()) {
    return Status::NotFound("input directory " + dir + " holds no data files (names starting with . or _ are left out)");
  }
  std::sort(names.begin(), names.end());
  const std::string prefix = dir.back() == '/' ? dir : dir + "/";
  for (const std::string& name : names) {
    bool is_dir = false;  // a file when listed
    STRATA_RETURN_IF_ERROR(CheckReadable(prefix + name, &is_dir));
    out->push_back(prefix + name);
  }
  return Status::OK();
}

// A named or matched path: a directory's data files, else the file itself.
Status ExpandPath(const std::string& path, std::vector<std::string>* out) {
  bool is_dir = false;
  STRATA_RETURN_IF_ERROR(CheckReadable(path, &is_dir));
  if (is_dir) return DirectoryFiles(path, out);
  out->push_back(path);
  return Status::OK();
}

}  // namespace

Status ExpandInputs(const std::vector<std::string>& patterns, std::vector<std::string>* files) {
  std::vector<std::string> out;
  for (const std::string& pattern : patterns) {
    if (pattern.empty()) return Status::InvalidArgument("empty input file name");
    if (!HasGlobChars(pattern)) {
      STRATA_RETURN_IF_ERROR(ExpandPath(pattern, &out));
      continue;
    }
    glob_t g{};
    int rc = ::glob(pattern.c_str(), GLOB_ERR, nullptr, &g);
    if (rc == GLOB_NOMATCH) {
      ::globfree(&g);
      return Status::NotFound("input pattern " + pattern + " matches no file");
    }
    if (rc != 0) {
      ::globfree(&g);
      return Status::IOError("cannot expand input pattern " + pattern);
    }
    std::vector<std::string> matches(g.gl_pathv, g.gl_pathv + g.gl_pathc);
    ::globfree(&g);
    for (const std::string& m : matches) STRATA_RETURN_IF_ERROR(ExpandPath(m, &out));
  }
  files->insert(files->end(), out.begin(), out.end());
  return Status::OK();
}

Status DetectEncoding(const std::string& path, FileEncoding* encoding) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("cannot open input file " + path, errno);
  unsigned char magic[4] = {0, 0, 0, 0};
  ssize_t got;
  do {
    got = ::pread(fd, magic, sizeof(magic), 0);
  } while (got < 0 && errno == EINTR);
  int err = errno;
  ::close(fd);
  if (got < 0) return ErrnoStatus("cannot read input file " + path, err);
  *encoding = FileEncoding::kPlain;
  if (got >= 2 && magic[0] == 0x1f && magic[1] == 0x8b) *encoding = FileEncoding::kGzip;
  if (got == 4 && std::memcmp(magic, "PAR1", 4) == 0) *encoding = FileEncoding::kParquet;
  return Status::OK();
}

}  // namespace strata
