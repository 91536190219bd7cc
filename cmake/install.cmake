# `cmake --install` layout: the binary, its man page, the systemd unit, an example of the
# unit's environment file, the Prometheus alert rules and the operator docs. scripts/package-deb
# builds the .deb from it (--prefix /usr).
#
# Paths outside the prefix follow it at install time, not at configure time, so that one build
# directory installs under /usr/local for a try-out and under /usr for the package: prefix /usr
# puts the environment file in /etc and the unit in /lib/systemd/system (Debian 12), any other
# prefix keeps both below it. The unit's ExecStart names the installed binary.
include(GNUInstallDirs)
set(ONCEORDER_DOCDIR ${CMAKE_INSTALL_DATAROOTDIR}/doc/onceorder)

install(TARGETS onceorder RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES docs/onceorder.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES deploy/prometheus/onceorder-alerts.yml deploy/prometheus/onceorder-alerts.test.yml
  DESTINATION ${CMAKE_INSTALL_DATADIR}/onceorder/prometheus)
install(FILES README.md docs/OPERATIONS.md docs/RUNBOOK.md docs/API.md docs/INVARIANTS.md
  docs/HA.md docs/CUTOVER.md DESTINATION ${ONCEORDER_DOCDIR})

install(CODE "
  set(onceorder_source \"${PROJECT_SOURCE_DIR}\")
  set(onceorder_work \"${PROJECT_BINARY_DIR}/install\")
  set(onceorder_bindir \"${CMAKE_INSTALL_BINDIR}\")
  set(onceorder_docdir \"${ONCEORDER_DOCDIR}\")
")
install(CODE [[
  if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
    set(onceorder_etc "/etc")
    set(onceorder_units "/lib/systemd/system")
  else()
    set(onceorder_etc "${CMAKE_INSTALL_PREFIX}/etc")
    set(onceorder_units "${CMAKE_INSTALL_PREFIX}/lib/systemd/system")
  endif()
  set(ONCEORDER_BIN "${CMAKE_INSTALL_PREFIX}/${onceorder_bindir}/onceorder")
  set(ONCEORDER_DOC_DIR "${CMAKE_INSTALL_PREFIX}/${onceorder_docdir}")
  set(ONCEORDER_ENV_FILE "${onceorder_etc}/onceorder/onceorder.env")
  configure_file("${onceorder_source}/deploy/systemd/onceorder.service.in"
    "${onceorder_work}/onceorder.service" @ONLY)
  # file(INSTALL) puts $DESTDIR in front of these absolute paths, as install() does.
  file(INSTALL DESTINATION "${onceorder_units}" TYPE FILE FILES "${onceorder_work}/onceorder.service")
  # 0600: it is where a PGPASSWORD goes (systemd reads it as root before dropping to the
  # service's user).
  file(INSTALL DESTINATION "${onceorder_etc}/onceorder" TYPE FILE
    PERMISSIONS OWNER_READ OWNER_WRITE
    FILES "${onceorder_source}/deploy/onceorder.env")
]])
